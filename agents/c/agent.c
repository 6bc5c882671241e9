/*
 * dbsock's C agent (docs/agents.md): dbsock-agent TARGET [LIBRARY].
 *
 * Speaks the agent protocol on stdin and stdout (JSON lines, parsed and
 * written with Debian's libjansson), opens connections with one C client
 * library (backends.c), times each op of a block on CLOCK_MONOTONIC,
 * checks each value's length and returns each op's latency. Nothing else.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"

#define MAX_CONNS 64

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct slot {
	char id[128];
	void *conn;
};

static struct slot conns[MAX_CONNS];

static struct slot *find(const char *id) {
	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i].conn && strcmp(conns[i].id, id) == 0)
			return &conns[i];
	return NULL;
}

static void say(json_t *msg) {
	char *s = json_dumps(msg, JSON_COMPACT);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		free(s);
	}
	json_decref(msg);
}

static void fail(const char *id, const char *msg) {
	say(json_pack("{s:s, s:s, s:s}", "type", "error", "id", id ? id : "", "message", msg));
}

static void do_open(const struct backend *b, json_t *m, const char *id) {
	char err[512] = "";
	struct slot *s = NULL;
	if (find(id)) {
		fail(id, "a connection of that id is open");
		return;
	}
	for (int i = 0; i < MAX_CONNS && !s; i++)
		if (!conns[i].conn)
			s = &conns[i];
	if (!s || strlen(id) >= sizeof s->id) {
		fail(id, "too many connections, or an id over 127 bytes");
		return;
	}
	json_t *reply = json_pack("{s:s, s:s}", "type", "opened", "id", id);
	void *c = b->open(m, reply, err, sizeof err);
	if (!c) {
		json_decref(reply);
		fail(id, err[0] ? err : "open failed");
		return;
	}
	snprintf(s->id, sizeof s->id, "%s", id);
	s->conn = c;
	say(reply);
}

static void do_block(const struct backend *b, json_t *m, const char *id) {
	struct slot *s = find(id);
	json_t *keys = json_object_get(m, "keys");
	long warmup = json_integer_value(json_object_get(m, "warmup"));
	long want = json_integer_value(json_object_get(m, "value_length"));
	size_t n = json_array_size(keys);
	if (!s || n == 0) {
		fail(id, s ? "a block of no keys" : "no such connection");
		return;
	}
	int64_t *ns = calloc(n, sizeof *ns);
	json_t *errors = json_array();
	char err[512];
	long len;
	for (long i = 0; i < warmup; i++)
		b->op(s->conn, json_array_get(keys, i % n), &len, err, sizeof err);
	for (size_t i = 0; i < n; i++) {
		json_t *key = json_array_get(keys, i);
		int64_t t0 = now_ns();
		int rc = b->op(s->conn, key, &len, err, sizeof err);
		ns[i] = now_ns() - t0;
		if (rc == 0 && len != want) {
			if (len < 0)
				snprintf(err, sizeof err, "no value");
			else
				snprintf(err, sizeof err, "value of %ld bytes, want %ld", len, want);
			rc = -1;
		}
		if (rc != 0)
			json_array_append_new(errors, json_pack("{s:I, s:s}", "index", (json_int_t)i, "message", err));
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_integer(ns[i]));
	free(ns);
	say(json_pack("{s:s, s:s, s:o, s:o}", "type", "block_result", "id", id, "ns", arr, "errors", errors));
}

/* empty is the op an overhead request times: nothing, called as an op is. */
static int empty(void *c, json_t *key, long *len, char *err, size_t errlen) {
	(void)c, (void)key, (void)err, (void)errlen;
	*len = 0;
	return 0;
}

static int (*volatile empty_op)(void *, json_t *, long *, char *, size_t) = empty;

static void do_overhead(json_t *m) {
	long n = json_integer_value(json_object_get(m, "n"));
	json_t *arr = json_array();
	char err[8];
	long len;
	for (long i = 0; i < n; i++) {
		int64_t t0 = now_ns();
		empty_op(NULL, NULL, &len, err, sizeof err);
		json_array_append_new(arr, json_integer(now_ns() - t0));
	}
	say(json_pack("{s:s, s:o}", "type", "overhead_result", "ns", arr));
}

static void do_close(const struct backend *b, const char *id) {
	struct slot *s = find(id);
	if (!s) {
		fail(id, "no such connection");
		return;
	}
	b->close(s->conn);
	s->conn = NULL;
	say(json_pack("{s:s, s:s}", "type", "closed", "id", id));
}

int main(int argc, char **argv) {
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: dbsock-agent TARGET [LIBRARY]\n");
		return 2;
	}
	const struct backend *b = backend_for(argv[1], argc == 3 ? argv[2] : "");
	if (!b) {
		fprintf(stderr, "dbsock-agent: no library %s for target %s in this build\n", argc == 3 ? argv[2] : "(default)", argv[1]);
		return 2;
	}
	char cc[64];
	snprintf(cc, sizeof cc, "gcc %d.%d", __GNUC__, __GNUC_MINOR__);
	say(json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s*, s:s*}", "type", "hello", "protocol", 1, "language", "c",
		"runtime_version", cc, "library", b->library, "library_version", b->version(),
		"mode", !strcmp(b->library, "hiredis") ? "resp2" : !strcmp(b->library, "libpq") || !strcmp(b->library, "libmariadb") ? "prepared" : NULL,
		"unprepared_mode", !strcmp(b->library, "libpq") ? "exec" : NULL));
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, stdin) > 0) {
		json_error_t jerr;
		json_t *m = json_loads(line, 0, &jerr);
		if (!json_is_object(m)) {
			fail(NULL, "not a JSON object");
			json_decref(m);
			continue;
		}
		const char *type = json_string_value(json_object_get(m, "type"));
		const char *id = json_string_value(json_object_get(m, "id"));
		type = type ? type : "";
		id = id ? id : "";
		if (strcmp(type, "open") == 0)
			do_open(b, m, id);
		else if (strcmp(type, "block") == 0)
			do_block(b, m, id);
		else if (strcmp(type, "overhead") == 0)
			do_overhead(m);
		else if (strcmp(type, "close") == 0)
			do_close(b, id);
		else
			fail(id, "unknown message type");
		json_decref(m);
	}
	free(line);
	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i].conn)
			b->close(conns[i].conn);
	return 0;
}
