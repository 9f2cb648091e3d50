/* Link-time stand-in for zlibwapi.dll: only its import library is used; the
 * DLL itself is kept away from the fake cuDNN DLLs (that is the point). */
__declspec(dllexport) int uncompress(unsigned char *dest, unsigned long *len,
                                     const unsigned char *src,
                                     unsigned long srclen)
{
    (void)dest;
    (void)len;
    (void)src;
    (void)srclen;
    return -2;
}
