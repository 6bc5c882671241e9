/*
 * The C agent's back ends: hiredis (redis), libpq (postgres), libmariadb
 * (mysql), libmemcached (memcached), and libc for dbsock's own servers
 * (pingpong: libc.c). Each opens one connection as the open message
 * says, makes the server see its token, prepares the lookup once where the
 * library can, and does one lookup per op: a blocking call, or, for the
 * event-loop model, its library's asynchronous calls on a non-blocking
 * socket (hiredis and libpq).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <libmemcached/memcached.h>
#include <libpq-fe.h>
#include <mysql.h>

#include "agent.h"

static const char *str(json_t *m, const char *k) {
	const char *s = json_string_value(json_object_get(m, k));
	return s ? s : "";
}

static int is_unix(json_t *m) { return strcmp(str(m, "network"), "unix") == 0; }

static long timeout_ms(json_t *m) {
	long t = json_integer_value(json_object_get(m, "op_timeout_ms"));
	return t > 0 ? t : 10000;
}

/* ca_file writes the open message's CA to a private temporary file (in
 * $TMPDIR, the agent's own directory, else /tmp) and returns its path (to
 * unlink), or NULL when there is none. */
static char *ca_file(json_t *m) {
	const char *pem = str(m, "tls_ca_pem");
	if (!*pem)
		return NULL;
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	size_t n = strlen(dir) + sizeof "/dbsock-ca-XXXXXX";
	char *path = malloc(n);
	if (!path)
		return NULL;
	snprintf(path, n, "%s/dbsock-ca-XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, pem, strlen(pem)) != (ssize_t)strlen(pem)) {
		if (fd >= 0)
			close(fd);
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

/* key_text is a key as text: a string as it is, an integer in decimal. */
static const char *key_text(json_t *key, char *buf, size_t n) {
	if (json_is_string(key))
		return json_string_value(key);
	snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(key));
	return buf;
}

/* hiredis */

static const char *hiredis_version(void) {
	static char v[32];
	snprintf(v, sizeof v, "%d.%d.%d", HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
	return v;
}

static int redis_ok(redisContext *c, redisReply *r, char *err, size_t errlen) {
	int ok = r && r->type != REDIS_REPLY_ERROR;
	if (!ok)
		snprintf(err, errlen, "%s", r ? r->str : c->errstr);
	if (r)
		freeReplyObject(r);
	return ok;
}

static void *redis_open(json_t *m, json_t *reply, char *err, size_t errlen) {
	(void)reply;
	long t = timeout_ms(m);
	struct timeval tv = {t / 1000, (t % 1000) * 1000};
	if (*str(m, "tls_ca_pem")) {
		snprintf(err, errlen, "hiredis %s has no TLS", hiredis_version());
		return NULL;
	}
	redisContext *c = is_unix(m) ? redisConnectUnixWithTimeout(str(m, "socket"), tv)
	                             : redisConnectWithTimeout(str(m, "host"), json_integer_value(json_object_get(m, "port")), tv);
	if (!c || c->err) {
		snprintf(err, errlen, "connect: %s", c ? c->errstr : "out of memory");
		if (c)
			redisFree(c);
		return NULL;
	}
	redisSetTimeout(c, tv);
	int ok = 1;
	if (*str(m, "password") && *str(m, "user"))
		ok = redis_ok(c, redisCommand(c, "AUTH %s %s", str(m, "user"), str(m, "password")), err, errlen);
	else if (*str(m, "password"))
		ok = redis_ok(c, redisCommand(c, "AUTH %s", str(m, "password")), err, errlen);
	if (ok && *str(m, "token")) /* unnamed: a connect scenario's op */
		ok = redis_ok(c, redisCommand(c, "CLIENT SETNAME %s", str(m, "token")), err, errlen);
	if (!ok) {
		redisFree(c);
		return NULL;
	}
	return c;
}

static int redis_op(void *conn, json_t *key, long *len, char *err, size_t errlen) {
	redisContext *c = conn;
	char buf[32];
	redisReply *r = redisCommand(c, "GET %s", key_text(key, buf, sizeof buf));
	if (!r || r->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "%s", r ? r->str : c->errstr);
		if (r)
			freeReplyObject(r);
		return -1;
	}
	*len = r->type == REDIS_REPLY_STRING ? (long)r->len : -1;
	freeReplyObject(r);
	return 0;
}

static void redis_close(void *c) { redisFree(c); }

/* hiredis without its blocking flag reads and writes what the socket
 * takes, and leaves the rest for later (redisBufferWrite, redisBufferRead). */
static int redis_nonblock(void *conn, int on, char *err, size_t errlen) {
	redisContext *c = conn;
	int fl = fcntl(c->fd, F_GETFL);
	if (fl < 0 || fcntl(c->fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) < 0) {
		snprintf(err, errlen, "fcntl O_NONBLOCK: %s", strerror(errno));
		return -1;
	}
	if (on)
		c->flags &= ~REDIS_BLOCK;
	else
		c->flags |= REDIS_BLOCK;
	return c->fd;
}

static int redis_flush(void *conn, char *err, size_t errlen) {
	redisContext *c = conn;
	int done = 0;
	if (redisBufferWrite(c, &done) != REDIS_OK) {
		snprintf(err, errlen, "%s", c->errstr);
		return -1;
	}
	return done ? 0 : 1;
}

static int redis_send(void *conn, json_t *key, char *err, size_t errlen) {
	redisContext *c = conn;
	char buf[32];
	if (redisAppendCommand(c, "GET %s", key_text(key, buf, sizeof buf)) != REDIS_OK) {
		snprintf(err, errlen, "%s", c->errstr);
		return -1;
	}
	return redis_flush(conn, err, errlen);
}

static int redis_recv(void *conn, long *len, char *err, size_t errlen) {
	redisContext *c = conn;
	redisReply *r = NULL;
	if (redisBufferRead(c) != REDIS_OK || redisGetReplyFromReader(c, (void **)&r) != REDIS_OK) {
		snprintf(err, errlen, "%s", c->errstr);
		return -1;
	}
	if (!r)
		return 0;
	int rc = 1;
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "%s", r->str);
		rc = -1;
	}
	*len = r->type == REDIS_REPLY_STRING ? (long)r->len : -1;
	freeReplyObject(r);
	return rc;
}

/* libpq */

struct pg {
	PGconn *c;
	char *statement; /* the lookup, when it is not prepared (NULL: prepared) */
	long len;        /* the event-loop model's op: its value's length */
	int failed;      /* and whether a result of it was an error */
};

static const char *libpq_version(void) {
	static char v[16];
	int n = PQlibVersion();
	snprintf(v, sizeof v, "%d.%d", n / 10000, n % 10000);
	return v;
}

static void *pg_open(json_t *m, json_t *reply, char *err, size_t errlen) {
	char port[16], host[256], timeout[24];
	char *ca = ca_file(m);
	if (is_unix(m)) { /* libpq takes the socket's directory and the port its name ends with */
		const char *s = str(m, "socket"), *slash = strrchr(s, '/'), *dot = strrchr(s, '.');
		snprintf(host, sizeof host, "%.*s", slash ? (int)(slash - s) : 0, s);
		snprintf(port, sizeof port, "%s", dot ? dot + 1 : "");
	} else {
		snprintf(host, sizeof host, "%s", str(m, "host"));
		snprintf(port, sizeof port, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(m, "port")));
	}
	snprintf(timeout, sizeof timeout, "%ld", (timeout_ms(m) + 999) / 1000);
	const char *k[] = {"host", "port", "user", "password", "dbname", "application_name", "sslmode", "sslrootcert", "connect_timeout", NULL};
	const char *v[] = {host, port, str(m, "user"), str(m, "password"), str(m, "database"), str(m, "token"),
		ca ? "verify-ca" : "disable", ca ? ca : "", timeout, NULL};
	PGconn *c = PQconnectdbParams(k, v, 0);
	if (ca) {
		unlink(ca);
		free(ca);
	}
	if (PQstatus(c) != CONNECTION_OK) {
		snprintf(err, errlen, "connect: %s", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	struct pg *p = calloc(1, sizeof *p);
	p->c = c;
	/* A pooler in transaction pooling cannot keep a prepared statement. */
	if (json_is_true(json_object_get(m, "no_prepare"))) {
		p->statement = strdup(str(m, "statement"));
	} else {
		PGresult *r = PQprepare(c, "dbsock_lookup", str(m, "statement"), 1, NULL); /* once per connection */
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			snprintf(err, errlen, "prepare %s: %s", str(m, "statement"), PQerrorMessage(c));
			PQclear(r);
			PQfinish(c);
			free(p);
			return NULL;
		}
		PQclear(r);
	}
	json_object_set_new(reply, "conn_id", json_integer(PQbackendPID(c)));
	return p;
}

static int pg_op(void *conn, json_t *key, long *len, char *err, size_t errlen) {
	struct pg *p = conn;
	char buf[32];
	const char *param = key_text(key, buf, sizeof buf);
	PGresult *r = p->statement ? PQexecParams(p->c, p->statement, 1, NULL, &param, NULL, NULL, 0)
	                           : PQexecPrepared(p->c, "dbsock_lookup", 1, &param, NULL, NULL, 0);
	int rc = 0;
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		snprintf(err, errlen, "%s", PQerrorMessage(p->c));
		rc = -1;
	} else {
		*len = PQntuples(r) > 0 && !PQgetisnull(r, 0, 0) ? PQgetlength(r, 0, 0) : -1;
	}
	PQclear(r);
	return rc;
}

/* libpq's asynchronous calls: PQsend* and PQflush on a non-blocking
 * connection, PQconsumeInput and PQgetResult until it has no more. */
static int pg_nonblock(void *conn, int on, char *err, size_t errlen) {
	struct pg *p = conn;
	if (PQsetnonblocking(p->c, on) != 0) {
		snprintf(err, errlen, "PQsetnonblocking: %s", PQerrorMessage(p->c));
		return -1;
	}
	return PQsocket(p->c);
}

static int pg_flush(void *conn, char *err, size_t errlen) {
	struct pg *p = conn;
	int rc = PQflush(p->c);
	if (rc < 0)
		snprintf(err, errlen, "%s", PQerrorMessage(p->c));
	return rc;
}

static int pg_send(void *conn, json_t *key, char *err, size_t errlen) {
	struct pg *p = conn;
	char buf[32];
	const char *param = key_text(key, buf, sizeof buf);
	int ok = p->statement ? PQsendQueryParams(p->c, p->statement, 1, NULL, &param, NULL, NULL, 0)
	                      : PQsendQueryPrepared(p->c, "dbsock_lookup", 1, &param, NULL, NULL, 0);
	if (!ok) {
		snprintf(err, errlen, "%s", PQerrorMessage(p->c));
		return -1;
	}
	p->len = -1;
	p->failed = 0;
	return pg_flush(conn, err, errlen);
}

static int pg_recv(void *conn, long *len, char *err, size_t errlen) {
	struct pg *p = conn;
	if (!PQconsumeInput(p->c)) {
		snprintf(err, errlen, "%s", PQerrorMessage(p->c));
		return -1;
	}
	while (!PQisBusy(p->c)) {
		PGresult *r = PQgetResult(p->c);
		if (!r) { /* the op's last result is in */
			*len = p->len;
			return p->failed ? -1 : 1;
		}
		if (PQresultStatus(r) != PGRES_TUPLES_OK && !p->failed) {
			snprintf(err, errlen, "%s", PQresultErrorMessage(r));
			p->failed = 1;
		} else if (PQresultStatus(r) == PGRES_TUPLES_OK) {
			p->len = PQntuples(r) > 0 && !PQgetisnull(r, 0, 0) ? PQgetlength(r, 0, 0) : -1;
		}
		PQclear(r);
	}
	return 0;
}

static void pg_close(void *conn) {
	struct pg *p = conn;
	PQfinish(p->c);
	free(p->statement);
	free(p);
}

/* libmariadb */

struct my {
	MYSQL *m;
	MYSQL_STMT *st;
	long long key;
	MYSQL_BIND param, result;
	char buf[64 << 10];
	unsigned long length;
	my_bool is_null;
};

static const char *mariadb_version(void) { return mysql_get_client_info(); }

static void *my_fail(struct my *c, const char *what, const char *msg, char *err, size_t errlen) {
	snprintf(err, errlen, "%s: %s", what, msg);
	if (c->st)
		mysql_stmt_close(c->st);
	mysql_close(c->m);
	free(c);
	return NULL;
}

static void *my_open(json_t *m, json_t *reply, char *err, size_t errlen) {
	struct my *c = calloc(1, sizeof *c);
	c->m = mysql_init(NULL);
	unsigned int t = (timeout_ms(m) + 999) / 1000;
	mysql_optionsv(c->m, MYSQL_OPT_CONNECT_TIMEOUT, &t);
	mysql_optionsv(c->m, MYSQL_OPT_READ_TIMEOUT, &t);
	mysql_optionsv(c->m, MYSQL_OPT_WRITE_TIMEOUT, &t);
	unsigned int proto = is_unix(m) ? MYSQL_PROTOCOL_SOCKET : MYSQL_PROTOCOL_TCP;
	mysql_optionsv(c->m, MYSQL_OPT_PROTOCOL, &proto);
	char *ca = ca_file(m);
	if (ca) {
		my_bool verify = 1;
		mysql_optionsv(c->m, MYSQL_OPT_SSL_CA, ca);
		mysql_optionsv(c->m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
	}
	MYSQL *ok = mysql_real_connect(c->m, is_unix(m) ? "localhost" : str(m, "host"), str(m, "user"), str(m, "password"),
		str(m, "database"), is_unix(m) ? 0 : json_integer_value(json_object_get(m, "port")), is_unix(m) ? str(m, "socket") : NULL, 0);
	if (ca) {
		unlink(ca);
		free(ca);
	}
	if (!ok)
		return my_fail(c, "connect", mysql_error(c->m), err, errlen);
	/* The token the server shows: a user lock this connection holds (none
	 * for a connect scenario's op: it opens unnamed). */
	const char *token = str(m, "token");
	if (*token) {
		char q[512], tok[260];
		if (strlen(token) > 128)
			return my_fail(c, "token", "over 128 bytes", err, errlen);
		mysql_real_escape_string(c->m, tok, token, strlen(token));
		snprintf(q, sizeof q, "SELECT GET_LOCK('%s', 0), CONNECTION_ID()", tok);
		if (mysql_query(c->m, q))
			return my_fail(c, "GET_LOCK", mysql_error(c->m), err, errlen);
		MYSQL_RES *res = mysql_store_result(c->m);
		MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
		if (row && row[1])
			json_object_set_new(reply, "conn_id", json_integer(strtoll(row[1], NULL, 10)));
		if (res)
			mysql_free_result(res);
	}
	c->st = mysql_stmt_init(c->m);
	const char *stmt = str(m, "statement");
	if (mysql_stmt_prepare(c->st, stmt, strlen(stmt))) /* once per connection */
		return my_fail(c, "prepare", mysql_stmt_error(c->st), err, errlen);
	c->param.buffer_type = MYSQL_TYPE_LONGLONG;
	c->param.buffer = &c->key;
	c->result.buffer_type = MYSQL_TYPE_BLOB;
	c->result.buffer = c->buf;
	c->result.buffer_length = sizeof c->buf;
	c->result.length = &c->length;
	c->result.is_null = &c->is_null;
	if (mysql_stmt_bind_param(c->st, &c->param) || mysql_stmt_bind_result(c->st, &c->result))
		return my_fail(c, "bind", mysql_stmt_error(c->st), err, errlen);
	return c;
}

static int my_op(void *conn, json_t *key, long *len, char *err, size_t errlen) {
	struct my *c = conn;
	c->key = json_integer_value(key);
	if (mysql_stmt_execute(c->st)) {
		snprintf(err, errlen, "%s", mysql_stmt_error(c->st));
		return -1;
	}
	int rc = mysql_stmt_fetch(c->st);
	*len = (rc == 0 || rc == MYSQL_DATA_TRUNCATED) && !c->is_null ? (long)c->length : -1;
	if (rc == 1)
		snprintf(err, errlen, "%s", mysql_stmt_error(c->st));
	mysql_stmt_free_result(c->st);
	return rc == 1 ? -1 : 0;
}

static void my_close(void *conn) {
	struct my *c = conn;
	mysql_stmt_close(c->st);
	mysql_close(c->m);
	free(c);
}

/* libmemcached */

static const char *libmemcached_version(void) { return memcached_lib_version(); }

static void *mc_open(json_t *m, json_t *reply, char *err, size_t errlen) {
	(void)reply;
	if (*str(m, "tls_ca_pem")) {
		snprintf(err, errlen, "libmemcached has no TLS");
		return NULL;
	}
	memcached_st *c = memcached_create(NULL);
	long t = timeout_ms(m);
	memcached_behavior_set(c, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
	memcached_behavior_set(c, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, t);
	memcached_behavior_set(c, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, t);
	memcached_return_t rc = is_unix(m) ? memcached_server_add_unix_socket(c, str(m, "socket"))
	                                   : memcached_server_add(c, str(m, "host"), json_integer_value(json_object_get(m, "port")));
	if (rc == MEMCACHED_SUCCESS && *str(m, "password")) {
		/* memcached's text-protocol authentication (-Y): a set of "user password" */
		char cred[512];
		int n = snprintf(cred, sizeof cred, "%s %s", str(m, "user"), str(m, "password"));
		rc = memcached_set(c, "auth", 4, cred, n, 0, 0);
	}
	if (rc == MEMCACHED_SUCCESS) {
		memcached_version(c); /* connected now, so that dbsock sees the connection */
		rc = memcached_last_error(c);
	}
	if (rc != MEMCACHED_SUCCESS) {
		snprintf(err, errlen, "connect: %s", memcached_last_error_message(c));
		memcached_free(c);
		return NULL;
	}
	return c;
}

static int mc_op(void *c, json_t *key, long *len, char *err, size_t errlen) {
	char buf[32];
	const char *k = key_text(key, buf, sizeof buf);
	size_t n;
	uint32_t flags;
	memcached_return_t rc;
	char *v = memcached_get(c, k, strlen(k), &n, &flags, &rc);
	if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_NOTFOUND) {
		snprintf(err, errlen, "%s", memcached_strerror(c, rc));
		free(v);
		return -1;
	}
	*len = v ? (long)n : -1;
	free(v);
	return 0;
}

static void mc_close(void *c) { memcached_free(c); }

static void my_thread_init(void) { mysql_thread_init(); }
static void my_thread_end(void) { mysql_thread_end(); }

#define FIELDS(l, f, tls_, v, o, op_, c) .library = l, .family = f, .tls = tls_, .version = v, .open = o, .op = op_, .close = c
#define BACKEND(...) {FIELDS(__VA_ARGS__)}

/* ASYNC are a back end's event-loop calls: its nonblock, send, flush and recv. */
#define ASYNC(p) .nonblock = p##_nonblock, .send = p##_send, .flush = p##_flush, .recv = p##_recv

static const struct backend backends[] = {
	{FIELDS("hiredis", "redis", 0, hiredis_version, redis_open, redis_op, redis_close), ASYNC(redis)},
	{FIELDS("libpq", "postgres", 1, libpq_version, pg_open, pg_op, pg_close), ASYNC(pg)},
	{.library = "libmariadb", .family = "mysql", .tls = 1, .version = mariadb_version, .open = my_open,
	 .op = my_op, .close = my_close, .thread_init = my_thread_init, .thread_end = my_thread_end},
	BACKEND("libmemcached", "memcached", 0, libmemcached_version, mc_open, mc_op, mc_close),
	BACKEND("libc", "pingpong", 0, libc_version, pp_open, pp_op, pp_close),
};

#define NBACKENDS (sizeof backends / sizeof backends[0])

const struct backend *backend_for(const char *family, const char *library) {
	for (size_t i = 0; i < NBACKENDS; i++)
		if (strcmp(backends[i].family, family) == 0 && (!*library || strcmp(backends[i].library, library) == 0))
			return &backends[i];
	return NULL;
}

size_t families(const char *library, const char **out, size_t n) {
	size_t k = 0;
	for (size_t i = 0; i < NBACKENDS; i++) {
		if (strcmp(backends[i].library, library) != 0)
			continue;
		size_t j = 0;
		while (j < k && strcmp(out[j], backends[i].family) != 0)
			j++;
		if (j == k && k < n)
			out[k++] = backends[i].family;
	}
	return k;
}
