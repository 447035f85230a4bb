/* The only decompression a bundle gets: gzip, inflated by zlib under a
 * bound of its own before libarchive sees a byte, so that libarchive reads
 * plain tar and none of its own filters (libarchive 3.6/3.7's gzip filter
 * ran for minutes and took 16 GiB on a 293-byte recursive gzip, before any
 * entry existed to be bounded). Input that is not gzip, a stream that is
 * corrupt or cut short, and bytes after the last gzip member are refused;
 * the inflated stream may not exceed max_out bytes. */
#ifndef BUNDLE_GUNZIP_H
#define BUNDLE_GUNZIP_H

#include <archive.h>
#include <stddef.h>

#include "cap_error.h"

typedef struct bundle_gunzip bundle_gunzip;

/* Opens a for reading the tar inside the gzip stream from fd (fd >= 0) or
 * from mem[0..len). NULL with err set when no state could be made. */
bundle_gunzip *bundle_gunzip_open(struct archive *a, int fd, const void *mem, size_t len, size_t max_out,
                                  cap_error *err);
/* After libarchive read the tar's end: the rest of the stream (libarchive
 * stops at the end-of-archive blocks) must be zero padding and the gzip
 * stream must end cleanly, with nothing after it: BUNDLE_FORMAT otherwise.
 * On success input_sha256 (65 bytes) is the SHA-256 of every input byte:
 * the bundle exactly as admitted, with no second read of its file. */
cap_code bundle_gunzip_drain(struct archive *a, bundle_gunzip *g, char *input_sha256, cap_error *err);
/* After libarchive failed: the refusal of the gzip layer (BUNDLE_FORMAT), if
 * it was the gzip layer that failed. */
cap_code bundle_gunzip_failure(const bundle_gunzip *g, cap_error *err);
/* Call after archive_read_free. */
void bundle_gunzip_free(bundle_gunzip *g);

#endif
