/* gw_error: lookups into the error table. Pure; any thread. */
#include "gw_error.h"

#include <string.h>

typedef struct {
    const char *code;
    int http;
    int rpc;
} s_error_t;

#define GW_ERROR_ROW(id, code, http, rpc) {code, http, rpc},
static const s_error_t s_errors[] = {GW_ERRORS (GW_ERROR_ROW)};
#undef GW_ERROR_ROW

const char *
gw_error_code (gw_error_t e)
{
    return e < GW_E_COUNT ? s_errors[e].code : "internal_error";
}

gw_error_t
gw_error_from_code (const char *code)
{
    for (int e = 0; code && e < GW_E_COUNT; e++)
        if (strcmp (s_errors[e].code, code) == 0)
            return (gw_error_t) e;
    return GW_E_INTERNAL;
}

int
gw_error_http_status (gw_error_t e)
{
    return e < GW_E_COUNT ? s_errors[e].http : 500;
}

int
gw_error_jsonrpc (gw_error_t e)
{
    return e < GW_E_COUNT ? s_errors[e].rpc : -32603;
}
