#include "bundle_gunzip.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "digest.h"
#include "safe_open.h"

struct bundle_gunzip {
  z_stream z;
  bool z_ready, member_ended, eof, digest_failed;
  int fd;
  const unsigned char *mem;
  size_t mem_len, mem_off;
  size_t out_total, max_out, in_total;
  digest_stream *input_digest; /* every compressed byte, as consumed */
  unsigned char in[65536], out[65536];
  cap_error why; /* the gzip layer's refusal, when it refused */
};

static la_ssize_t refuse(struct archive *a, bundle_gunzip *g, const char *why, const char *detail) {
  cap_fail(&g->why, CAP_E_BUNDLE_FORMAT, "%s%s", why, detail);
  archive_set_error(a, EINVAL, "%s", g->why.message);
  return -1;
}

/* More compressed bytes into g->z; false at the end of the input. */
static bool refill(bundle_gunzip *g) {
  if (g->z.avail_in > 0) return true;
  size_t n = 0;
  if (g->fd >= 0) {
    ssize_t r;
    do r = read(g->fd, g->in, sizeof g->in);
    while (r < 0 && errno == EINTR);
    n = r > 0 ? (size_t)r : 0;
  } else {
    n = g->mem_len - g->mem_off < sizeof g->in ? g->mem_len - g->mem_off : sizeof g->in;
    memcpy(g->in, g->mem + g->mem_off, n);
    g->mem_off += n;
  }
  g->z.next_in = g->in;
  g->z.avail_in = (uInt)n;
  g->in_total += n;
  if (n && !digest_stream_update(g->input_digest, g->in, n)) g->digest_failed = true;
  return n > 0;
}

static la_ssize_t read_cb(struct archive *a, void *client, const void **buffer) {
  bundle_gunzip *g = client;
  *buffer = g->out;
  if (g->eof) return 0;
  g->z.next_out = g->out;
  g->z.avail_out = sizeof g->out;
  while (g->z.avail_out == sizeof g->out) {
    bool more = refill(g);
    if (g->member_ended) {
      if (!more) { /* every member ended where the input ends */
        g->eof = true;
        return 0;
      }
      /* Another gzip member follows (RFC 1952 allows them), or garbage. */
      if (g->z.avail_in < 2 ? false : (g->z.next_in[0] != 0x1f || g->z.next_in[1] != 0x8b))
        return refuse(a, g, "bytes after the end of the gzip stream", "");
      inflateReset(&g->z);
      g->member_ended = false;
    } else if (!more) {
      return refuse(a, g, g->in_total == 0 ? "the bundle is empty" : "the gzip stream is cut short", "");
    }
    int r = inflate(&g->z, Z_NO_FLUSH);
    if (r == Z_STREAM_END)
      g->member_ended = true;
    else if (r == Z_BUF_ERROR && g->z.avail_in == 0)
      continue;
    else if (r != Z_OK)
      return refuse(a, g,
                    g->out_total == 0 && g->z.total_out == 0 ? "not a gzip-compressed tar bundle: "
                                                             : "the gzip stream is corrupt: ",
                    g->z.msg ? g->z.msg : "no gzip header");
  }
  size_t got = sizeof g->out - g->z.avail_out;
  g->out_total += got;
  if (g->out_total > g->max_out) {
    char limit[32];
    snprintf(limit, sizeof limit, "%zu bytes", g->max_out);
    return refuse(a, g, "the bundle inflates past ", limit);
  }
  return (la_ssize_t)got;
}

bundle_gunzip *bundle_gunzip_open(struct archive *a, int fd, const void *mem, size_t len, size_t max_out,
                                  cap_error *err) {
  bundle_gunzip *g = calloc(1, sizeof *g);
  if (g) g->input_digest = digest_stream_begin();
  /* 16 + MAX_WBITS: a gzip wrapper and nothing else (no zlib, no raw).
   * Out of memory, or zlib refusing to start: no input reaches this. */
  if (!g || !g->input_digest || inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
    if (g) digest_stream_abandon(g->input_digest);
    free(g);
    cap_fail(err, CAP_E_INTERNAL, "out of memory (or zlib could not start)");
    return NULL;
  }
  g->fd = fd;
  g->mem = mem;
  g->mem_len = len;
  g->max_out = max_out;
  g->z_ready = true;
  archive_read_open(a, g, NULL, read_cb, NULL);
  return g;
}

cap_code bundle_gunzip_drain(struct archive *a, bundle_gunzip *g, char *input_sha256, cap_error *err) {
  const void *buf;
  la_ssize_t n;
  while ((n = read_cb(a, g, &buf)) > 0)
    for (la_ssize_t i = 0; i < n; i++)
      if (((const unsigned char *)buf)[i] != 0)
        return cap_fail(err, CAP_E_BUNDLE_FORMAT, "data after the end of the tar archive");
  if (bundle_gunzip_failure(g, err)) return err->code;
  /* read_cb returned 0: the input was read to its end, every byte hashed. */
  bool ok = !g->digest_failed && digest_stream_end(g->input_digest, input_sha256);
  g->input_digest = NULL;
  return ok ? CAP_OK : cap_fail(err, CAP_E_INTERNAL, "cannot hash the bundle");
}

cap_code bundle_gunzip_failure(const bundle_gunzip *g, cap_error *err) {
  if (!g || !g->why.code) return CAP_OK;
  return cap_fail(err, g->why.code, "%s", g->why.message);
}

void bundle_gunzip_free(bundle_gunzip *g) {
  if (!g) return;
  if (g->z_ready) inflateEnd(&g->z);
  digest_stream_abandon(g->input_digest);
  free(g);
}
