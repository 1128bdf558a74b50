/* gw_sql_options: the default options of an exec_sql run; see
 * gw_sql_options.h. Any thread. */
#include "gw_sql_options.h"

gw_sql_options_t
gw_sql_options_default (void)
{
    return (gw_sql_options_t) {
        .max_inline_rows = 30, .max_rows = GW_SQL_MAX_ROWS,
        .max_cell_bytes = GW_SQL_MAX_CELL_BYTES,
        .timeout_s = 0, .csv_uid = -1, .csv_gid = -1,
    };
}
