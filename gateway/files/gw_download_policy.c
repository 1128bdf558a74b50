/* gw_download_policy: the pure rules of gw_download: which addresses a
 * download may connect to, and what a downloaded file may be called.
 * See gw_download.h. No I/O, no allocation but one buffer; any thread. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_download.h"
#include "jp_utf8.h"

/* ---- addresses ---------------------------------------------------------- */

/* a in network order, masked to bits, equals net (a.b.c.d) */
#define S_IN(a, b0, b1, b2, b3, bits) \
    (((a) >> (32 - (bits)) << (32 - (bits))) \
     == (((uint32_t) (b0) << 24 | (uint32_t) (b1) << 16 | (uint32_t) (b2) << 8 | (b3)) \
         >> (32 - (bits)) << (32 - (bits))))

/* The class of an IPv4 address given in host order. */
static gw_addr_kind_t
s_classify_v4 (uint32_t a)
{
    if (a == 0xffffffffu)
        return GW_ADDR_BROADCAST;
    if (S_IN (a, 0, 0, 0, 0, 8))
        return GW_ADDR_UNSPECIFIED;
    if (S_IN (a, 127, 0, 0, 0, 8))
        return GW_ADDR_LOOPBACK;
    if (S_IN (a, 10, 0, 0, 0, 8) || S_IN (a, 172, 16, 0, 0, 12) || S_IN (a, 192, 168, 0, 0, 16))
        return GW_ADDR_PRIVATE;
    if (S_IN (a, 169, 254, 0, 0, 16))
        return GW_ADDR_LINK_LOCAL;
    if (S_IN (a, 100, 64, 0, 0, 10))
        return GW_ADDR_CGNAT;
    if (S_IN (a, 224, 0, 0, 0, 4))
        return GW_ADDR_MULTICAST;
    if (S_IN (a, 240, 0, 0, 0, 4)              /* future use */
        || S_IN (a, 192, 0, 0, 0, 24)          /* IETF protocol assignments */
        || S_IN (a, 192, 0, 2, 0, 24)          /* TEST-NET-1 */
        || S_IN (a, 192, 88, 99, 0, 24)        /* 6to4 relay anycast (deprecated) */
        || S_IN (a, 198, 18, 0, 0, 15)         /* benchmarking */
        || S_IN (a, 198, 51, 100, 0, 24)       /* TEST-NET-2 */
        || S_IN (a, 203, 0, 113, 0, 24))       /* TEST-NET-3 */
        return GW_ADDR_RESERVED;
    return GW_ADDR_PUBLIC;
}

static uint32_t
s_v4_at (const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static bool
s_zero (const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* The class of an IPv6 address (16 bytes). */
static gw_addr_kind_t
s_classify_v6 (const uint8_t *b)
{
    if (s_zero (b, 16))
        return GW_ADDR_UNSPECIFIED;
    if (s_zero (b, 15) && b[15] == 1)
        return GW_ADDR_LOOPBACK;
    /* addresses that carry an IPv4 address: classed by it */
    if (s_zero (b, 10) && b[10] == 0xff && b[11] == 0xff)       /* ::ffff:a.b.c.d mapped */
        return s_classify_v4 (s_v4_at (b + 12));
    if (s_zero (b, 12))                                         /* ::a.b.c.d compatible */
        return s_classify_v4 (s_v4_at (b + 12));
    if (s_zero (b, 8) && b[8] == 0xff && b[9] == 0xff && !b[10] && !b[11])  /* translated */
        return s_classify_v4 (s_v4_at (b + 12));
    if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) {
        if (s_zero (b + 4, 8))                                  /* 64:ff9b::/96 NAT64 */
            return s_classify_v4 (s_v4_at (b + 12));
        return GW_ADDR_RESERVED;                                /* 64:ff9b:1::/48 local NAT64 */
    }
    if (b[0] == 0x20 && b[1] == 0x02)                           /* 2002::/16 6to4 */
        return s_classify_v4 (s_v4_at (b + 2));
    if (b[0] == 0xff)
        return GW_ADDR_MULTICAST;
    if ((b[0] & 0xfe) == 0xfc)                                  /* fc00::/7 unique local */
        return GW_ADDR_PRIVATE;
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)                  /* fe80::/10 */
        return GW_ADDR_LINK_LOCAL;
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)                  /* fec0::/10 site-local */
        return GW_ADDR_PRIVATE;
    if ((b[0] & 0xe0) != 0x20)      /* outside 2000::/3, the only global unicast space */
        return GW_ADDR_RESERVED;
    if (b[0] == 0x20 && b[1] == 0x01) {
        if (!b[2] && !b[3])                                     /* 2001::/32 Teredo */
            return GW_ADDR_RESERVED;
        if (!b[2] && b[3] == 0x02 && !b[4] && !b[5])            /* 2001:2::/48 benchmarking */
            return GW_ADDR_RESERVED;
        if (!b[2] && ((b[3] & 0xf0) == 0x10 || (b[3] & 0xf0) == 0x20))  /* ORCHID (v2) */
            return GW_ADDR_RESERVED;
        if (b[2] == 0x0d && b[3] == 0xb8)                       /* 2001:db8::/32 documentation */
            return GW_ADDR_RESERVED;
    }
    if (b[0] == 0x3f && b[1] == 0xff && (b[2] & 0xf0) == 0x00)  /* 3fff::/20 documentation */
        return GW_ADDR_RESERVED;
    return GW_ADDR_PUBLIC;
}

gw_addr_kind_t
gw_download_classify (const struct sockaddr *addr, socklen_t len)
{
    if (!addr || len < (socklen_t) sizeof (sa_family_t))
        return GW_ADDR_INVALID;
    if (addr->sa_family == AF_INET && len >= (socklen_t) sizeof (struct sockaddr_in)) {
        struct sockaddr_in in;
        memcpy (&in, addr, sizeof in);
        return s_classify_v4 (ntohl (in.sin_addr.s_addr));
    }
    if (addr->sa_family == AF_INET6 && len >= (socklen_t) sizeof (struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy (&in6, addr, sizeof in6);
        return s_classify_v6 (in6.sin6_addr.s6_addr);
    }
    return GW_ADDR_INVALID;
}

gw_addr_kind_t
gw_download_classify_text (const char *ip)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (!ip)
        return GW_ADDR_INVALID;
    if (inet_pton (AF_INET, ip, &a4) == 1)
        return s_classify_v4 (ntohl (a4.s_addr));
    if (inet_pton (AF_INET6, ip, &a6) == 1)
        return s_classify_v6 (a6.s6_addr);
    return GW_ADDR_INVALID;
}

const char *
gw_download_kind_text (gw_addr_kind_t kind)
{
    switch (kind) {
    case GW_ADDR_PUBLIC: return "a public address";
    case GW_ADDR_LOOPBACK: return "a loopback address";
    case GW_ADDR_PRIVATE: return "a private network address";
    case GW_ADDR_LINK_LOCAL: return "a link-local address (cloud metadata lives there)";
    case GW_ADDR_CGNAT: return "a carrier-grade NAT address";
    case GW_ADDR_MULTICAST: return "a multicast address";
    case GW_ADDR_UNSPECIFIED: return "an unspecified address";
    case GW_ADDR_BROADCAST: return "the broadcast address";
    case GW_ADDR_RESERVED: return "a reserved address";
    case GW_ADDR_INVALID: break;
    }
    return "not an IP address";
}

/* ---- names -------------------------------------------------------------- */

/* Characters dropped from names: C0 and C1 controls, DEL, and the
 * invisible direction marks and overrides that can disguise an
 * extension ("gpj.exe" shown as "exe.jpg"). */
static bool
s_dropped (uint32_t c)
{
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x200e || c == 0x200f
           || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028
           || c == 0x2029 || c == 0xfeff;
}

/* Cuts len back to a UTF-8 character boundary of s. */
static size_t
s_boundary (const char *s, size_t len)
{
    while (len > 0 && ((uint8_t) s[len] & 0xc0) == 0x80)
        len--;
    return len;
}

/* The offset of name's extension dot, or its length when it has none (a
 * short one: 1-16 bytes after a dot that is not the first byte). */
static size_t
s_ext_at (const char *name, size_t len)
{
    const char *dot = memrchr (name, '.', len);
    if (!dot || dot == name || (size_t) (name + len - dot) > 17)
        return len;
    return (size_t) (dot - name);
}

void
gw_download_safe_name (const char *raw, size_t len, char *out, size_t out_len)
{
    snprintf (out, out_len, "download");
    size_t start = 0;
    for (size_t i = 0; i < len; i++)
        if (raw[i] == '/' || raw[i] == '\\')
            start = i + 1;
    const uint8_t *p = (const uint8_t *) raw + start;
    size_t n = len - start;
    char *buf = malloc (n + 1);
    if (!buf)
        return;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t w = jp_utf8_char (p + i, n - i, &c);
        if (w == 0) {
            buf[k++] = '_';     /* invalid UTF-8 */
            i++;
            continue;
        }
        bool leading = k == 0 && (c == '.' || c == ' ');
        if (!s_dropped (c) && !leading) {
            memcpy (buf + k, p + i, w);
            k += w;
        }
        i += w;
    }
    while (k > 0 && buf[k - 1] == ' ')
        k--;
    buf[k] = '\0';
    if (k > GW_DOWNLOAD_NAME_MAX) {
        size_t ext = s_ext_at (buf, k);
        size_t ext_len = k - ext;
        size_t stem = s_boundary (buf, GW_DOWNLOAD_NAME_MAX - ext_len);
        memmove (buf + stem, buf + ext, ext_len);
        k = stem + ext_len;
        buf[k] = '\0';
    }
    if (k > 0 && out_len > k)
        memcpy (out, buf, k + 1);
    free (buf);
}

static int
s_hex (char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

void
gw_download_name_from_url (const char *url, char *out, size_t out_len)
{
    snprintf (out, out_len, "download");
    const char *p = strstr (url, "://");
    p = p ? p + 3 : url;
    size_t auth = strcspn (p, "/?#");
    p += auth;
    size_t path_len = *p == '/' ? strcspn (p, "?#") : 0;
    const char *seg = path_len ? memrchr (p, '/', path_len) + 1 : p;
    size_t seg_len = path_len ? (size_t) (p + path_len - seg) : 0;
    if (!seg_len)
        return;
    char *decoded = malloc (seg_len + 1);
    if (!decoded)
        return;
    size_t k = 0;
    for (size_t i = 0; i < seg_len; i++) {
        int hi, lo;
        if (seg[i] == '%' && i + 2 < seg_len && (hi = s_hex (seg[i + 1])) >= 0
            && (lo = s_hex (seg[i + 2])) >= 0) {
            decoded[k++] = (char) (hi << 4 | lo);
            i += 2;
        } else
            decoded[k++] = seg[i];
    }
    gw_download_safe_name (decoded, k, out, out_len);
    free (decoded);
}

void
gw_download_suffixed (const char *name, unsigned n, char *out, size_t out_len)
{
    size_t len = strlen (name);
    size_t ext = s_ext_at (name, len);
    char suffix[16];
    int suffix_len = snprintf (suffix, sizeof suffix, "-%u", n);
    size_t stem = ext;
    if (stem + (size_t) suffix_len + (len - ext) > GW_DOWNLOAD_NAME_MAX)
        stem = s_boundary (name, GW_DOWNLOAD_NAME_MAX - (size_t) suffix_len - (len - ext));
    snprintf (out, out_len, "%.*s%s%s", (int) stem, name, suffix, name + ext);
}
