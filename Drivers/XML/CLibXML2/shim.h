// The parts of libxml2 the XML driver uses: the streaming reader (and the writer, for callers
// that prefer it). The module is named CLibXML2 so it never clashes with the libxml2 that
// FoundationXML links (both resolve to the same shared library; only one copy is loaded).
//
// Debian's libxml2 is built with ICU, and its encoding.h then includes the system's ICU headers,
// whose `UErrorCode` clashes with the copy Foundation ships (_FoundationICU). We never touch the
// ICU-dependent fields (the `uconv_in`/`uconv_out` members at the end of xmlCharEncodingHandler;
// we never allocate or read that struct), so the headers are read as if ICU were off.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/xmlreader.h>
#include <libxml/xmlwriter.h>
