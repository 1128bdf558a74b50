/* gw_config: every setting of the contract, read in rising precedence from
 * the built-in default, a .env file (or --config FILE), the environment and
 * command-line flags. One table (GW_SETTINGS) gives each setting's name,
 * default, kind, scope (every command, or the HTTP server only) and help.
 * Values are checked as they are set, and a bad one is an error naming the
 * setting and where it came from; a template's "<...>" value sets nothing.
 *
 * Threads: built by the main thread before any other starts; read-only
 * afterwards, so any thread may read it. */
#ifndef GW_CONFIG_H
#define GW_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* X(ID, NAME, DEFAULT, KIND, SCOPE, HELP). KIND: STR, INT (a positive
 * integer), UINT (zero or more), BOOL (0/1), AUTO (a positive integer, or
 * "auto": worked out from other settings by gw_config_resolve), CORES (a
 * positive number of CPU cores, such as 0.5), or a word list "a|b|c" for
 * ENUM. SCOPE: ANY, or HTTP for what only `codebox serve` reads (binding,
 * tokens, CORS, connections, links served over HTTP): `codebox mcp --help`
 * leaves those out. A default worked out at start (DEFAULT "") is said
 * once, at the end of HELP: "... (default: the host name)". */
#define GW_SETTINGS(X) \
    X (HOST, "CODEBOX_HOST", "127.0.0.1", STR, HTTP, "HTTP bind address") \
    X (PORT, "CODEBOX_PORT", "8000", UINT, HTTP, "HTTP port (0 picks a free one)") \
    X (STATE_DIR, "CODEBOX_STATE_DIR", "", STR, ANY, "one folder per session under it; one server per folder (default: /var/lib/codebox as root, else $XDG_STATE_HOME/codebox or ~/.local/state/codebox)") \
    X (API_TOKENS, "CODEBOX_API_TOKENS", "", STR, HTTP, "comma-separated [tenant:]token list; when set, HTTP needs Authorization: Bearer") \
    X (DEFAULT_KERNEL, "CODEBOX_DEFAULT_KERNEL", "python3", STR, ANY, "kernelspec used when a request names none") \
    X (KERNEL_PATH, "CODEBOX_KERNEL_PATH", "", STR, ANY, "extra kernelspec folders, ':'-separated, searched first") \
    X (KERNEL_START_TIMEOUT, "CODEBOX_KERNEL_START_TIMEOUT", "60", INT, ANY, "seconds a kernel may take to become ready") \
    X (SESSION_TTL, "CODEBOX_SESSION_TTL", "604800", INT, ANY, "seconds a session may live, paused time included; then it ends and its files go") \
    X (IDLE_TIMEOUT, "CODEBOX_IDLE_TIMEOUT", "86400", INT, ANY, "seconds without a call before a session ends and its files go (its kernel stopped long before, at CODEBOX_IDLE_PAUSE)") \
    X (IDLE_PAUSE, "CODEBOX_IDLE_PAUSE", "600", UINT, ANY, "seconds without a call before a session's kernel is stopped and the session kept as paused (folder, record, settings); its next call starts a kernel again, and the first answer says so. 0 never pauses") \
    X (CLEANUP_INTERVAL, "CODEBOX_CLEANUP_INTERVAL", "30", INT, ANY, "seconds between reaper passes") \
    X (EXEC_TIMEOUT, "CODEBOX_EXEC_TIMEOUT", "300", INT, ANY, "seconds one execution may run; then interrupt, then restart") \
    X (CPU_TIME_LIMIT, "CODEBOX_CPU_TIME_LIMIT", "300", INT, ANY, "CPU seconds one execution may use, all its processes and threads together (cgroup cpuacct); then interrupt, then restart") \
    X (CPU_LIMIT, "CODEBOX_CPU_LIMIT", "1", CORES, ANY, "CPU cores a session's processes may use together, at every moment (between executions too): a CFS quota on the kernel's cpu cgroup from its start (as root, cgroup v1); execution_options.cpu_limit is clamped to it") \
    X (MAX_SESSIONS, "CODEBOX_MAX_SESSIONS", "64", INT, ANY, "live sessions at once (kernels running: a paused session does not count)") \
    X (MAX_STORED_SESSIONS, "CODEBOX_MAX_STORED_SESSIONS", "1024", INT, ANY, "sessions kept in all, live and paused (at most 4096); the next create gets a clear error") \
    X (TENANT_MAX_SESSIONS, "CODEBOX_TENANT_MAX_SESSIONS", "auto", AUTO, HTTP, "live sessions one tenant may hold (auto: half of CODEBOX_MAX_SESSIONS when CODEBOX_API_TOKENS names several tenants, else all); the same fraction of every other table a tenant fills (MCP sessions, kept results, SQL workers, MCP tasks) is its share there, so one tenant never locks out another") \
    X (NODE_NAME, "CODEBOX_NODE_NAME", "", STR, ANY, "this node's name among many (default: the host name)") \
    X (DIRECTORY_URL, "CODEBOX_DIRECTORY_URL", "", STR, ANY, "redis://HOST[:PORT][/DB]: the session directory many nodes share (listings span the nodes; a session another node holds is refused naming it)") \
    X (POOL_SIZE, "CODEBOX_POOL_SIZE", "2", UINT, ANY, "warm kernels kept per pooled kernelspec") \
    X (POOL_KERNELS, "CODEBOX_POOL_KERNELS", "", STR, ANY, "kernelspecs with a warm pool (default: the default kernel)") \
    X (POOL_PRELOAD, "CODEBOX_POOL_PRELOAD", "numpy,pandas,matplotlib", STR, ANY, "modules a warm Python kernel has imported before a session takes it (those installed; with matplotlib, pyplot and its PNG renderer readied too); empty: none") \
    X (KERNEL_USER, "CODEBOX_KERNEL_USER", "codebox-kernel", STR, ANY, "user kernels run as when the gateway runs as root") \
    X (FORK_SERVER, "CODEBOX_FORK_SERVER", "on", "on|off", ANY, "sandboxed ipykernel kernels are forked from one process that imported CODEBOX_POOL_PRELOAD, sharing its memory (as root with bubblewrap; else off); off: each kernel is started") \
    X (SANDBOX, "CODEBOX_SANDBOX", "auto", "bwrap|none|auto", ANY, "kernel sandbox") \
    X (NETWORK, "CODEBOX_NETWORK", "off", "on|off", ANY, "whether kernel code may reach the network") \
    X (KERNEL_HISTORY, "CODEBOX_KERNEL_HISTORY", "memory", "memory|disk", ANY, "where IPython kernels keep their input history: memory (In, Out and %history within the session) or disk (IPython's SQLite file, about 1 ms more per cell)") \
    X (MEMORY_LIMIT_MB, "CODEBOX_MEMORY_LIMIT_MB", "2048", INT, ANY, "memory per kernel, MiB") \
    X (MAX_PROCESSES, "CODEBOX_MAX_PROCESSES", "128", INT, ANY, "processes and threads per kernel") \
    X (DISK_QUOTA_MB, "CODEBOX_DISK_QUOTA_MB", "1024", INT, ANY, "size of a session folder, MiB; also the largest file") \
    X (MAX_OUTPUT_BYTES, "CODEBOX_MAX_OUTPUT_BYTES", "1048576", INT, ANY, "text kept per execution") \
    X (DOWNLOAD_TIMEOUT, "CODEBOX_DOWNLOAD_TIMEOUT", "120", INT, ANY, "seconds for upload_file") \
    X (MAX_DOWNLOAD_SIZE, "CODEBOX_MAX_DOWNLOAD_SIZE", "524288000", INT, ANY, "bytes for upload_file") \
    X (SQL_DSN, "CODEBOX_SQL_DSN", "", STR, ANY, "ODBC connection string for exec_sql (default: the bundled SQLite sample)") \
    X (SQL_MAX_INLINE_ROWS, "CODEBOX_SQL_MAX_INLINE_ROWS", "30", INT, ANY, "larger SQL results go to CSV") \
    X (BLOB_URL, "CODEBOX_BLOB_URL", "", STR, ANY, "Azure Blob service URL (https://ACCOUNT.blob.core.windows.net); wins over the connection string's") \
    X (BLOB_CONNECTION_STRING, "CODEBOX_BLOB_CONNECTION_STRING", "", STR, ANY, "Azure Storage connection string (AccountName, AccountKey, BlobEndpoint...); turns on artifact upload") \
    X (BLOB_ACCOUNT_KEY, "CODEBOX_BLOB_ACCOUNT_KEY", "", STR, ANY, "the account key (base64) when CODEBOX_BLOB_URL is given without a connection string") \
    X (BLOB_CONTAINER, "CODEBOX_BLOB_CONTAINER", "codebox-artifacts", STR, ANY, "Azure Blob container") \
    X (BLOB_SAS_EXPIRY_HOURS, "CODEBOX_BLOB_SAS_EXPIRY_HOURS", "24", INT, ANY, "hours a SAS URL stays valid") \
    X (PACKAGE_ALLOW, "CODEBOX_PACKAGE_ALLOW", "", STR, ANY, "packages that may be installed") \
    X (PACKAGE_DENY, "CODEBOX_PACKAGE_DENY", "", STR, ANY, "packages that may not be installed") \
    X (PIP_INDEX_URL, "CODEBOX_PIP_INDEX_URL", "", STR, ANY, "pip index") \
    X (PIP_FIND_LINKS, "CODEBOX_PIP_FIND_LINKS", "", STR, ANY, "local folder of wheels") \
    X (NPM_REGISTRY, "CODEBOX_NPM_REGISTRY", "", STR, ANY, "npm registry") \
    X (OAUTH_ISSUER, "CODEBOX_OAUTH_ISSUER", "", STR, HTTP, "an OAuth 2.1 authorization server (its issuer URL) whose JWT access tokens are accepted beside CODEBOX_API_TOKENS: its metadata names the keys (jwks_uri); clients find it from a 401 and /.well-known/oauth-protected-resource") \
    X (OAUTH_AUDIENCE, "CODEBOX_OAUTH_AUDIENCE", "", STR, HTTP, "the resource a token must be issued for (its aud claim; default CODEBOX_PUBLIC_URL + /mcp)") \
    X (OAUTH_TENANT_CLAIM, "CODEBOX_OAUTH_TENANT_CLAIM", "sub", STR, HTTP, "the token claim that names the tenant (a value that is no tenant name becomes u- and 16 hex digits of its SHA-256)") \
    X (OAUTH_JWKS_REFRESH, "CODEBOX_OAUTH_JWKS_REFRESH", "300", INT, HTTP, "seconds between fetches of the issuer's keys (a token naming an unknown key fetches them at once, at most every 30 s): a key the issuer drops is refused after at most this long") \
    X (PUBLIC_URL, "CODEBOX_PUBLIC_URL", "", STR, HTTP, "base URL clients reach the gateway at; turns on signed artifact URLs") \
    X (URL_SECRET, "CODEBOX_URL_SECRET", "", STR, HTTP, "key for signed artifact URLs (default: random per process, so links end with a restart)") \
    X (MAX_IMAGE_BYTES, "CODEBOX_MAX_IMAGE_BYTES", "262144", INT, ANY, "larger images are sent downscaled with a link") \
    X (MODEL_TEXT_BYTES, "CODEBOX_MODEL_TEXT_BYTES", "32768", INT, ANY, "text one MCP result gives the model; longer output keeps its head and tail, and the whole is saved in the session (.codebox/outputs/) and linked") \
    X (DOWNLOAD_ALLOW_PRIVATE, "CODEBOX_DOWNLOAD_ALLOW_PRIVATE", "0", BOOL, ANY, "1 lets upload_file fetch private addresses") \
    X (ALLOW_CLIENT_SQL_DSN, "CODEBOX_ALLOW_CLIENT_SQL_DSN", "0", BOOL, HTTP, "1 lets a client name its own ODBC connection string") \
    X (RESULT_STORE_MB, "CODEBOX_RESULT_STORE_MB", "512", INT, ANY, "MiB of finished results kept for GET /execute/{id}/results; past it the oldest of the tenant that holds the most go first") \
    X (MAX_QUEUED_EXECUTIONS, "CODEBOX_MAX_QUEUED_EXECUTIONS", "64", INT, ANY, "executions waiting in one session's queue; more get 429") \
    X (MAX_MCP_SESSIONS, "CODEBOX_MAX_MCP_SESSIONS", "1024", INT, HTTP, "MCP sessions (Mcp-Session-Id, /sse) at once over HTTP, a tenant its share; idle ones expire first") \
    X (MCP_SESSION_IDLE_TIMEOUT, "CODEBOX_MCP_SESSION_IDLE_TIMEOUT", "3600", INT, HTTP, "seconds an MCP session over HTTP may stay unused before it expires (then 404: initialize again)") \
    X (MAX_CONNECTIONS_PER_ADDRESS, "CODEBOX_MAX_CONNECTIONS_PER_ADDRESS", "1024", INT, HTTP, "HTTP connections one client address may hold at once (4000 in all)") \
    X (HTTP_IDLE_TIMEOUT, "CODEBOX_HTTP_IDLE_TIMEOUT", "30", INT, HTTP, "seconds an HTTP connection may sit idle (no request under way) before it is closed") \
    X (HTTP_REQUEST_TIMEOUT, "CODEBOX_HTTP_REQUEST_TIMEOUT", "30", INT, HTTP, "seconds a connection has to deliver a whole request (headers and body) once it is ready for one; then it is cut (a client that trickles its headers or body holds no connection for good)") \
    X (WS_PING_INTERVAL, "CODEBOX_WS_PING_INTERVAL", "30", INT, HTTP, "seconds a websocket client may stay silent before it is pinged; one that does not answer within as long again is closed") \
    X (VOLUMES_MAX, "CODEBOX_VOLUMES_MAX", "8", UINT, ANY, "named volumes one tenant may have (POST /volumes; 0: none)") \
    X (VOLUME_MAX_MB, "CODEBOX_VOLUME_MAX_MB", "4096", INT, ANY, "MiB all of one tenant's volumes may hold together (each volume's size_mb counts whole)") \
    X (MOUNT_ROOTS, "CODEBOX_MOUNT_ROOTS", "", STR, ANY, "':'-separated host folders clients may mount into sessions (execution_options.mount_points), read-only; ROOT=rw also allows read-write") \
    X (ALLOWED_ORIGINS, "CODEBOX_ALLOWED_ORIGINS", "", STR, HTTP, "comma-separated browser origins (https://app.example.com) that may call the API, with CORS; every other Origin is refused") \
    X (LOG_LEVEL, "CODEBOX_LOG_LEVEL", "info", "debug|info|warn|error", ANY, "lowest level of log lines written to stderr") \
    X (MCP_TOOLS, "CODEBOX_MCP_TOOLS", "codebox", STR, ANY, "the tool sets MCP clients see, separated by commas: codebox (its own tools), or a seed's own for drop-in use: codebox-ai (execute_code, one-shot), e2b (the E2B sandbox MCP server's ten tools), code-box (Code Box's seven); where two sets have a tool of the same name, the set named first offers it") \
    X (MCP_APP_HTML, "CODEBOX_MCP_APP_HTML", "", STR, ANY, "the MCP Apps view that `make apps` builds, served as ui://codebox/outputs.html to clients that declare the io.modelcontextprotocol/ui extension; unset: mcp-app-outputs.html beside the binary; when there is none, no client sees UI metadata") \
    X (MCP_APP_OUTPUT_BYTES, "CODEBOX_MCP_APP_OUTPUT_BYTES", "2097152", INT, ANY, "bytes of output items one MCP result hands the MCP Apps view (in _meta, kept from the model): an image over CODEBOX_MAX_IMAGE_BYTES, and outputs past this budget, are replaced there by a one-line note; what the model sees is unchanged") \
    X (MCP_CONFORMANCE, "CODEBOX_MCP_CONFORMANCE", "0", BOOL, ANY, "tests only: offer the MCP conformance fixtures (in the test build build/codebox-conformance; the production binary has none)")

#define GW_SETTING_ID(id, name, def, kind, scope, help) GW_SET_##id,
typedef enum { GW_SETTINGS (GW_SETTING_ID) GW_SETTING_COUNT } gw_setting_t;
#undef GW_SETTING_ID

typedef struct gw_config gw_config_t;

/* A config holding every default. NULL on OOM. */
gw_config_t *gw_config_new (void);
void gw_config_destroy (gw_config_t **self_p);

/* Sets one setting by its NAME ("CODEBOX_PORT") from source (for messages:
 * ".env line 3", "environment", "--port"). Returns 0; -ENOENT for an unknown
 * name; -EINVAL for a bad value, with a sentence in err. */
int gw_config_set (gw_config_t *self, const char *name, const char *value,
                   const char *source, char *err, size_t err_len);

/* Reads a .env file: NAME=VALUE lines, optional "export ", # comments,
 * single or double quotes (double quotes know \n \t \" \\). Unknown
 * CODEBOX_ names are errors; other names are ignored. A missing file is
 * fine unless required. Returns 0 or a negative errno with err set. */
int gw_config_load_file (gw_config_t *self, const char *path, bool required,
                         char *err, size_t err_len);

/* Parses .env text (as above; source names the file in messages). */
int gw_config_load_text (gw_config_t *self, const char *text, const char *source,
                         char *err, size_t err_len);

/* Reads every CODEBOX_ setting from the environment. Returns 0 or -EINVAL. */
int gw_config_load_env (gw_config_t *self, char *err, size_t err_len);

/* Code Box's (CodeBoxMCP's) names are read too, by gw_config_load_text and
 * gw_config_load_env, as fallbacks: SESSION_TTL, IDLE_TIMEOUT,
 * CLEANUP_INTERVAL, EXEC_TIMEOUT, MCP_HOST, MCP_PORT, DOWNLOAD_TIMEOUT,
 * MAX_DOWNLOAD_SIZE, AZURE_BLOB_CONNECTION_STRING, AZURE_BLOB_CONTAINER_NAME,
 * BLOB_SAS_EXPIRY_HOURS, AZURE_DATABASE_CONNECTION_STRING,
 * SQL_MAX_INLINE_ROWS, BASE_WORKDIR. Ours win where a source gives both.
 * Calls fn for each alias that was read (to log it once). */
typedef void (gw_config_alias_fn) (const char *alias, const char *ours, const char *source,
                                   void *arg);
void gw_config_each_alias (const gw_config_t *self, gw_config_alias_fn *fn, void *arg);

/* The i-th of those names (from 0) and, in *id, the setting it stands
 * for; NULL past the last. For the configuration docs. */
const char *gw_config_alias_name (size_t i, gw_setting_t *id);

/* A value written as a template's placeholder, "<...>" (Code Box's .env
 * ships AZURE_BLOB_CONNECTION_STRING=<your-connection-string>), sets
 * nothing: the setting keeps what it had. gw_config_load_text and
 * gw_config_load_env note each one; fn is called for each (written is the
 * name as written, ours the setting) to warn of it once. */
void gw_config_each_placeholder (const gw_config_t *self, gw_config_alias_fn *fn, void *arg);

/* Works out the settings whose value depends on others, once every source
 * has been read (before anything reads them): CODEBOX_TENANT_MAX_SESSIONS
 * "auto" becomes half of CODEBOX_MAX_SESSIONS (at least 1) when
 * CODEBOX_API_TOKENS names two tenants or more, else CODEBOX_MAX_SESSIONS;
 * a value above CODEBOX_MAX_SESSIONS becomes that. Returns 0 or -ENOMEM. */
int gw_config_resolve (gw_config_t *self);

/* The number of distinct tenants a CODEBOX_API_TOKENS value names (a
 * token without "tenant:" is the tenant "default"); 0 for no tokens. Pure:
 * it judges no names (gw_auth does). */
int gw_config_count_tenants (const char *tokens);

/* One tenant's share of a table of size slots: the same fraction as its
 * live sessions have of the server's, size * CODEBOX_TENANT_MAX_SESSIONS /
 * CODEBOX_MAX_SESSIONS, at least 1 (and size itself when the tenant may
 * hold every session). After gw_config_resolve. */
long gw_config_share (const gw_config_t *self, long size);

/* Typed reads. */
const char *gw_config_str (const gw_config_t *self, gw_setting_t id);
long gw_config_int (const gw_config_t *self, gw_setting_t id);
bool gw_config_bool (const gw_config_t *self, gw_setting_t id);

/* The setting's NAME, e.g. "CODEBOX_PORT". */
const char *gw_setting_name (gw_setting_t id);

/* What a reader is told of one setting (--help, docs/CONFIGURATION.md):
 * kind is the KIND column as written ("INT", "on|off"); help is HELP
 * without a closing "(default: ...)", whose text is then def (in words);
 * else def is DEFAULT, or "" when the setting has none. Borrowed from the
 * table. */
typedef struct {
    const char *name;
    const char *kind;
    bool http_only;             /* SCOPE HTTP */
    const char *help;
    size_t help_len;
    const char *def;
    size_t def_len;
    bool def_in_words;          /* def is HELP's "(default: ...)", not a value */
} gw_setting_doc_t;

void gw_setting_doc (gw_setting_t id, gw_setting_doc_t *doc);

/* Writes "  NAME  HELP (default: D)" lines for --help, each default once;
 * without http, only the settings `codebox mcp` (stdio) reads. */
void gw_config_print_help (FILE *out, bool http);

#endif
