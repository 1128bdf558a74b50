/* test_oauth: gw_oauth's settings and what it says to clients, with an
 * issuer that cannot be reached (its keys are then never loaded and every
 * token is refused, with a reason): the audience from CODEBOX_PUBLIC_URL,
 * RFC 9728's metadata URL and document, the WWW-Authenticate challenge
 * (quotes and control characters of a reason cannot break the header),
 * settings refused at start; gw_auth with OAuth: no token, a static
 * token beside it, a refused JWT. Real tokens against a real provider:
 * tests/mcp/oauth.test.js. */
#include <string.h>

#include "gw_auth.h"
#include "gw_oauth.h"
#include "suites.h"

static gw_oauth_t *
s_oauth (const char *audience, const char *public_url)
{
    char err[256] = "";
    gw_oauth_settings_t s = {"http://127.0.0.1:9/issuer", audience, public_url, "", 300};
    gw_oauth_t *o = gw_oauth_new (&s, err, sizeof err);
    ck_assert_msg (o != NULL, "%s", err);
    return o;
}

START_TEST (metadata_and_challenge)
{
    gw_oauth_t *o = s_oauth ("", "https://cb.example.com/");
    json_t *meta = gw_oauth_resource_metadata (o);
    ck_assert_str_eq (json_string_value (json_object_get (meta, "resource")),
                      "https://cb.example.com/mcp");
    ck_assert_str_eq (json_string_value (json_array_get (json_object_get (
                          meta, "authorization_servers"), 0)), "http://127.0.0.1:9/issuer");
    json_decref (meta);
    char out[512];
    gw_oauth_challenge (o, NULL, out, sizeof out);
    ck_assert_str_eq (out, "Bearer resource_metadata=\"https://cb.example.com/.well-known/"
                           "oauth-protected-resource/mcp\"");
    gw_oauth_challenge (o, "bad \"aud\"\r\nX: y", out, sizeof out);
    ck_assert_ptr_nonnull (strstr (out, ", error=\"invalid_token\", error_description=\"bad "
                                        "'aud'''X: y\""));
    char claim[GW_OAUTH_CLAIM_MAX], why[160] = "";
    ck_assert (!gw_oauth_check (o, "a.b.c", claim, sizeof claim, why, sizeof why));
    ck_assert_ptr_nonnull (strstr (why, "not loaded"));
    gw_oauth_destroy (&o);
    ck_assert_ptr_null (o);
    /* an audience of its own: the metadata URL follows it */
    o = s_oauth ("https://api.example.com:8443/tools/mcp", "");
    gw_oauth_challenge (o, NULL, out, sizeof out);
    ck_assert_str_eq (out, "Bearer resource_metadata=\"https://api.example.com:8443/.well-known/"
                           "oauth-protected-resource/tools/mcp\"");
    gw_oauth_destroy (&o);
    ck_assert (gw_oauth_metadata_path ("/.well-known/oauth-protected-resource"));
    ck_assert (gw_oauth_metadata_path ("/.well-known/oauth-protected-resource/mcp"));
    ck_assert (!gw_oauth_metadata_path ("/.well-known/oauth-protected-resource/x"));
}
END_TEST

START_TEST (settings_refused)
{
    char err[256] = "";
    gw_oauth_settings_t s = {"ftp://issuer", "", "https://cb.example.com", "", 300};
    ck_assert_ptr_null (gw_oauth_new (&s, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "CODEBOX_OAUTH_ISSUER"));
    s.issuer = "https://issuer.example.com";
    s.public_url = "";
    ck_assert_ptr_null (gw_oauth_new (&s, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "CODEBOX_PUBLIC_URL"));
    s.audience = "urn:codebox";
    ck_assert_ptr_null (gw_oauth_new (&s, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "CODEBOX_OAUTH_AUDIENCE"));
}
END_TEST

START_TEST (auth_with_oauth)
{
    char err[256] = "", tenant[64] = "", challenge[512] = "";
    gw_auth_t *a = gw_auth_new ("ops:static-1", err, sizeof err);
    gw_auth_set_oauth (a, s_oauth ("", "https://cb.example.com"));
    ck_assert (gw_auth_enabled (a));
    ck_assert (gw_auth_check (a, "Bearer static-1", tenant, sizeof tenant, challenge,
                              sizeof challenge));
    ck_assert_str_eq (tenant, "ops");
    ck_assert (!gw_auth_check (a, NULL, tenant, sizeof tenant, challenge, sizeof challenge));
    ck_assert_ptr_nonnull (strstr (challenge, "resource_metadata="));
    ck_assert_ptr_null (strstr (challenge, "error="));
    ck_assert (!gw_auth_check (a, "Bearer eyJhbGciOiJub25lIn0.e30.", tenant, sizeof tenant,
                               challenge, sizeof challenge));
    ck_assert_ptr_nonnull (strstr (challenge, "error=\"invalid_token\""));
    gw_auth_destroy (&a);
    /* OAuth alone: a caller without a token is no longer "default" */
    a = gw_auth_new (NULL, err, sizeof err);
    gw_auth_set_oauth (a, s_oauth ("", "https://cb.example.com"));
    ck_assert (gw_auth_enabled (a));
    ck_assert (!gw_auth_check (a, NULL, tenant, sizeof tenant, challenge, sizeof challenge));
    ck_assert (!gw_auth_check (a, "Bearer ", tenant, sizeof tenant, challenge, sizeof challenge));
    gw_auth_destroy (&a);
}
END_TEST

Suite *
oauth_suite (void)
{
    Suite *s = suite_create ("oauth");
    TCase *tc = tcase_create ("resource server");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, metadata_and_challenge);
    tcase_add_test (tc, settings_refused);
    tcase_add_test (tc, auth_with_oauth);
    suite_add_tcase (s, tc);
    return s;
}
