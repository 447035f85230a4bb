/* file:// URIs for the statements' resource descriptors (RFC 8089). */
#ifndef FILE_URI_H
#define FILE_URI_H

#include <stdbool.h>
#include <stddef.h>

/* "file://" and path made absolute (its realpath when it exists, else
 * joined to the working directory), every byte but RFC 3986's unreserved
 * ones and '/' percent-encoded, so a space, '#' or '%' in a path stays
 * part of it. false when the URI does not fit in size. */
bool file_uri(const char *path, char *out, size_t size);

/* The path a file:// URI names, when the URI is exactly what file_uri
 * writes for a lexically normal absolute path (uppercase %XX for every byte
 * but the unreserved ones and '/', no NUL); false otherwise. */
bool file_uri_path(const char *uri, char *path, size_t size);

#endif
