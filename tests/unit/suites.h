/* suites: the Check suites that check_main.c runs, one per file of
 * tests/unit/. Each test runs in its own forked process (CK_FORK), so a test
 * may change the environment, the umask or the working directory freely. */
#ifndef SUITES_H
#define SUITES_H

#include <check.h>

Suite *sign_suite (void);          /* test_sign.c */
Suite *message_suite (void);       /* test_message.c */
Suite *connection_suite (void);    /* test_connection.c */
Suite *spec_suite (void);          /* test_kernelspec.c */
Suite *search_suite (void);        /* test_kernelspec.c */
Suite *path_suite (void);          /* test_path.c */
Suite *artifacts_suite (void);     /* test_artifacts.c */
Suite *sql_classify_suite (void);  /* test_sql_classify.c */
Suite *sql_run_suite (void);       /* test_sql_run.c */
Suite *config_suite (void);        /* test_config.c */
Suite *package_policy_suite (void); /* test_package_policy.c */
Suite *download_suite (void);      /* test_download.c */
Suite *blob_auth_suite (void);     /* test_blob_auth.c */
Suite *http_edge_suite (void);     /* test_http_edge.c */
Suite *execution_suite (void);     /* test_execution.c */
Suite *jupyter_wire_suite (void);  /* test_jupyter_wire.c */
Suite *loop_suite (void);          /* test_loop.c */
Suite *jobs_suite (void);          /* test_jobs.c */
Suite *zmtp_filter_suite (void);   /* test_zmtp_filter.c */
Suite *zmtp_client_suite (void);   /* test_zmtp_client.c */
Suite *changes_suite (void);       /* test_changes.c */
Suite *display_text_suite (void);  /* test_display_text.c */
Suite *decoder_suite (void);       /* test_decoder.c */
Suite *proxy_request_suite (void); /* test_proxy_request.c */
Suite *utf8_suite (void);          /* test_utf8.c */
Suite *tool_sets_suite (void);     /* test_tool_sets.c */
Suite *notebook_suite (void);      /* test_notebook.c */
Suite *jupyter_asks_suite (void);  /* test_jupyter_asks.c */
Suite *pool_preload_suite (void);  /* test_pool_preload.c */
Suite *oauth_suite (void);         /* test_oauth.c */
Suite *jwt_suite (void);           /* test_jwt.c */

#endif
