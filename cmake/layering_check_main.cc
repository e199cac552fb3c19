// The program behind each dmindex_<layer>_layering target (cmake/DmindexLayer.cmake): it links
// every object of one layer against only the layers that layer declares, so that linking
// it is the check. It is never run.
int main() { return 0; }
