/* Names of the state a tree keeps about itself, in <root>/.cudnn-deploy/. */
#ifndef CDD_STATE_H
#define CDD_STATE_H

#define CDD_STATE_DIR ".cudnn-deploy"
#define CDD_LOCK_FILE CDD_STATE_DIR "/lock"
#define CDD_JOURNAL_FILE CDD_STATE_DIR "/journal"
#define CDD_RECEIPT_FILE CDD_STATE_DIR "/receipt.json"
#define CDD_VERIFIED_FILE CDD_STATE_DIR "/verified.json"
#define CDD_MANIFEST_COPY CDD_STATE_DIR "/manifest.json"
#define CDD_LOG_FILE CDD_STATE_DIR "/log.jsonl"
#define CDD_BACKUP_DIR CDD_STATE_DIR "/backup"
#define CDD_STAGE_PREFIX "stage-"

#endif
