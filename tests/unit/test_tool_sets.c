/* test_tool_sets: gw_mcp_tool_sets_parse, CODEBOX_MCP_TOOLS read as the
 * tool sets in the order the value names them (which decides the tool a
 * name means when two sets share one): spaces and empty items ignored, a
 * set named twice kept where it first comes, unknown names and an empty
 * list refused with a sentence naming them. Pure code, no threads. */
#include <string.h>

#include "gw_mcp_tool_sets.h"
#include "suites.h"

START_TEST (order_is_the_values)
{
    gw_mcp_set_order_t order;
    char err[256] = "";
    ck_assert_int_eq (gw_mcp_tool_sets_parse ("codebox-ai, codebox", &order, err, sizeof err), 0);
    ck_assert_uint_eq (order.n, 2);
    ck_assert_int_eq (order.set[0], GW_MCP_SET_CODEBOX_AI);
    ck_assert_int_eq (order.set[1], GW_MCP_SET_CODEBOX);
    ck_assert_int_eq (gw_mcp_tool_sets_parse (" codebox ,,codebox-ai,codebox ", &order, err,
                                              sizeof err), 0);
    ck_assert_uint_eq (order.n, 2);
    ck_assert_int_eq (order.set[0], GW_MCP_SET_CODEBOX);
    ck_assert_int_eq (order.set[1], GW_MCP_SET_CODEBOX_AI);
    ck_assert_str_eq (gw_mcp_tool_set_name (order.set[1]), "codebox-ai");
}
END_TEST

START_TEST (unknown_and_empty_are_refused)
{
    gw_mcp_set_order_t order;
    char err[256] = "";
    ck_assert_int_eq (gw_mcp_tool_sets_parse ("codebox,e2c", &order, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "unknown tool set 'e2c'"));
    ck_assert_int_eq (gw_mcp_tool_sets_parse (" , ", &order, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "no tool set named"));
    ck_assert_int_eq (gw_mcp_tool_sets_parse (NULL, &order, err, sizeof err), -1);
}
END_TEST

Suite *
tool_sets_suite (void)
{
    Suite *s = suite_create ("tool_sets");
    TCase *tc = tcase_create ("parse");
    tcase_add_test (tc, order_is_the_values);
    tcase_add_test (tc, unknown_and_empty_are_refused);
    suite_add_tcase (s, tc);
    return s;
}
