/* A dependency in two versions: with CDD_FAKE_NEW it exports a function the
 * old one lacks. A DLL linked against the new one but given the old one
 * fails to load with "entry point not found" (error 127). */
__declspec(dllexport) int cdd_fake_old_function(void)
{
    return 1;
}

#ifdef CDD_FAKE_NEW
__declspec(dllexport) int cdd_fake_new_function(void)
{
    return 2;
}
#endif
