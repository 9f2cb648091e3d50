/* cudnn-deploy: entry point. Everything happens in the CLI layer
 * (src/cli/) and the core library. */
#include "cli.h"

int main(int argc, char **argv)
{
    return cdd_cli_main(argc, argv);
}
