/* gw_rest_sql: POST /sql, on top of gw_sql (which classifies, runs on its
 * worker threads and answers in the loop thread). Rows come back inline
 * when few; otherwise as a CSV under the session's input/ with the first
 * rows. A client that leaves before the answer cancels its query.
 *
 * Threads: the loop thread only. */
#include <string.h>

#include "gw_rest.h"
#include "gw_session.h"
#include "gw_sql.h"

/* Whether the client of a waiting POST /sql closed its connection: the
 * query is then cancelled (gw_sql asks every GW_SQL_PROBE_MS). */
static bool
s_client_gone (void *arg)
{
    return gw_request_client_gone (arg);
}

/* POST /sql: answers when the query is done. */
static void
s_rest_done (json_t *result, void *arg)
{
    gw_request_t *req = arg;
    json_t *error = json_object_get (result, "error");
    int status = error ? gw_error_http_status (gw_error_from_code (
                             json_string_value (json_object_get (error, "code"))))
                       : 200;
    gw_request_reply_json (req, status, result);
}

void
gw_sql_rest_handle (gw_server_t *server, gw_request_t *req)
{
    json_error_t jerr;
    json_t *body = json_loadb (req->body, req->body_len, 0, &jerr);
    const char *id = json_string_value (json_object_get (body, "session_id"));
    json_t *query_json = json_object_get (body, "query");
    const char *query = json_string_value (query_json);
    json_t *rows = json_object_get (body, "max_inline_rows");
    if (!body)
        gw_request_reply_error (req, GW_E_INVALID_JSON, "the body is not valid JSON: %s", jerr.text);
    else if (!id || !query || strlen (query) != json_string_length (query_json)
             || (rows && !json_is_null (rows)
                 && !(json_is_integer (rows) && json_integer_value (rows) > 0)))
        gw_request_reply_error (req, GW_E_BAD_REQUEST,
                                "send {\"session_id\": ID, \"query\": SQL, \"max_inline_rows\"?: "
                                "positive integer}");
    else if (gw_request_header (req, "X-Codebox-Sql-Dsn")
             && !gw_config_bool (gw_server_config (server), GW_SET_ALLOW_CLIENT_SQL_DSN))
        gw_request_reply_error (req, GW_E_BAD_REQUEST,
                                "X-Codebox-Sql-Dsn is not allowed on this server "
                                "(CODEBOX_ALLOW_CLIENT_SQL_DSN=0)");
    else {
        gw_session_t *session = gw_rest_session_or_reply (server, req, id);
        if (session) {
            long max_rows = gw_caller_clamp (
                json_is_integer (rows) ? (long) json_integer_value (rows) : 0,
                req->overrides.sql_max_inline_rows);
            gw_sql_request_t r;
            char key[140];
            gw_sql_request_for (&r, server, session, key, sizeof key, gw_request_header (req, "X-Codebox-Sql-Dsn"), query, max_rows,
                       req->overrides.exec_timeout);
            r.gone = s_client_gone;
            r.gone_arg = req;
            if (gw_sql_query (gw_server_sql (server), &r, s_rest_done, req) != 0)
                gw_request_reply_error (req, GW_E_INTERNAL, "the SQL workers are not running");
        }
    }
    json_decref (body);
}
