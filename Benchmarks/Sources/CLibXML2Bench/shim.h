// The XML section's raw baseline: libxml2's streaming reader (xmlReaderForFile, xmlTextReaderRead).
// Named CLibXML2Bench so it never clashes with the XML driver's CLibXML2 module.
//
// Debian's libxml2 is built with ICU, and its encoding.h then includes the system's ICU headers,
// whose `UErrorCode` clashes with the copy Foundation ships; the reader never touches the
// ICU-dependent fields, so the headers are read as if ICU were off (as Drivers/XML/CLibXML2 does).
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/xmlreader.h>
// malloc_trim: the memory-at-rest figure returns freed heap to the system before reading RSS.
#include <malloc.h>
