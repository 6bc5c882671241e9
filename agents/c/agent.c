/*
 * dbsock's C agent (docs/agents.md): dbsock-agent TARGET [LIBRARY].
 *
 * Speaks the agent protocol on stdin and stdout (JSON lines, parsed and
 * written with Debian's libjansson), opens connections with one C client
 * library (backends.c), times each op of a block on CLOCK_MONOTONIC,
 * checks each value's length and returns each op's latency. A load
 * (protocol 2) runs many connections at once, a thread each, closed
 * loop or paced at an offered rate; with --workers event-loop, from one
 * event loop in the agent's main thread (eventloop.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "core.h"

static struct slot conns[MAX_CONNS];

/* event_loop: the agent runs its loads from one event loop (eventloop.c),
 * started with --workers event-loop; else a thread per connection. */
static int event_loop;

struct slot *find(const char *id) {
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
		if (fflush(stdout) != 0)
			exit(1); /* dbsock is gone (EPIPE, SIGPIPE being ignored) */
		free(s);
	}
	json_decref(msg);
}

static void fail(const char *id, const char *msg) {
	say(json_pack("{s:s, s:s, s:s}", "type", "error", "id", id ? id : "", "message", msg));
}

/* family_list writes the families started's library speaks, "a, b". */
static void family_list(const struct backend *started, char *out, size_t n) {
	const char *f[8];
	size_t k = families(started->library, f, 8);
	out[0] = 0;
	for (size_t i = 0; i < k; i++)
		snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? ", " : "", f[i]);
}

/* do_open opens a connection with the back end of the open's family (protocol
 * 2), or, in an open without one (protocol 1), the one the agent was started
 * with. */
static void do_open(const struct backend *started, json_t *m, const char *id) {
	char err[512] = "";
	struct slot *s = NULL;
	const struct backend *b = started;
	json_t *family = json_object_get(m, "family");
	if (family && !json_is_null(family)) {
		const char *f = json_string_value(family);
		b = f ? backend_for(f, started->library) : NULL;
		if (!b) {
			char fams[128];
			family_list(started, fams, sizeof fams);
			snprintf(err, sizeof err, "open with family %.64s: this agent, started with %s, speaks %s; start it with a library for that family",
				f ? f : "(not a string)", started->library, fams);
			fail(id, err);
			return;
		}
	}
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
	s->b = b;
	s->conn = c;
	s->open = json_deep_copy(m);
	if (s->open)
		json_object_set_new(s->open, "token", json_string(""));
	say(reply);
}

/* op_on does one op on s: the lookup on its connection, or, in the connect
 * scenario, on a connection of its own opened with s's open message and
 * closed after it, as dbsock's Go client times it. *end is when it ended. */
static int op_on(struct slot *s, int connect, json_t *key, long *len, char *err, size_t size, int64_t *end) {
	if (!connect) {
		int rc = s->b->op(s->conn, key, len, err, size);
		*end = now_ns();
		return rc;
	}
	json_t *scratch = json_object();
	err[0] = 0;
	void *c = s->open ? s->b->open(s->open, scratch, err, size) : NULL;
	json_decref(scratch);
	if (!c) {
		*end = now_ns();
		*len = -1;
		if (!err[0])
			snprintf(err, size, "open failed");
		return -1;
	}
	int rc = s->b->op(c, key, len, err, size);
	s->b->close(c);
	*end = now_ns();
	return rc;
}

int scenario_of(json_t *m, char *msg, size_t len) {
	json_t *v = json_object_get(m, "scenario");
	const char *sc = v && !json_is_null(v) ? json_string_value(v) : "";
	if (sc && (!*sc || !strcmp(sc, "pk")))
		return 0;
	if (sc && !strcmp(sc, "connect"))
		return 1;
	snprintf(msg, len, "scenario %.64s: this agent times \"connect\" and lookups on open connections", sc ? sc : "(not a string)");
	return -1;
}

static void do_block(json_t *m, const char *id) {
	struct slot *s = find(id);
	json_t *keys = json_object_get(m, "keys");
	long warmup = json_integer_value(json_object_get(m, "warmup"));
	long want = json_integer_value(json_object_get(m, "value_length"));
	size_t n = json_array_size(keys);
	if (!s || n == 0) {
		fail(id, s ? "a block of no keys" : "no such connection");
		return;
	}
	char err[512];
	int connect = scenario_of(m, err, sizeof err);
	if (connect < 0) {
		fail(id, err);
		return;
	}
	int64_t *ns = calloc(n, sizeof *ns), end;
	json_t *errors = json_array();
	long len;
	for (long i = 0; i < warmup; i++)
		op_on(s, connect, json_array_get(keys, i % n), &len, err, sizeof err, &end);
	for (size_t i = 0; i < n; i++) {
		json_t *key = json_array_get(keys, i);
		int64_t t0 = now_ns();
		int rc = op_on(s, connect, key, &len, err, sizeof err, &end);
		ns[i] = end - t0;
		rc = check_value(rc, len, want, err, sizeof err);
		if (rc != 0)
			json_array_append_new(errors, json_pack("{s:I, s:s}", "index", (json_int_t)i, "message", err));
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_integer(ns[i]));
	free(ns);
	say(json_pack("{s:s, s:s, s:o, s:o}", "type", "block_result", "id", id, "ns", arr, "errors", errors));
}

/* A load (protocol 2): each connection is run by its own worker thread,
 * started at the connection's first load and kept until its close, so that
 * its CPU time stays in /proc/PID/task, where dbsock reads the agent's. All
 * are given their part, warm up and wait for one moment T0; closed loop
 * (interval 0) or open loop, op j of connection c due at T0 + offset[c] +
 * j*interval and waited for by sleeping to it. Each keeps its numbers in
 * arrays allocated before it starts, and nothing is written until every
 * one is done. */

struct thread {
	pthread_t th;
	const struct backend *b;
	pthread_mutex_t mu;
	pthread_cond_t cv, idle; /* cv: a job or quit; idle: the job is done */
	struct part *job; /* the part to run; NULL when idle */
	int quit;
};

/* run runs part w on its connection, in its worker thread. */
static void run(struct part *w) {
	struct load *L = w->load;
	struct slot *s = w->s;
	char err[512];
	long len;
	int64_t done;
	for (long i = 0; i < L->warmup; i++)
		op_on(s, L->connect, json_array_get(w->keys, (size_t)i % w->nkeys), &len, err, sizeof err, &done);
	pthread_barrier_wait(&L->warm);
	pthread_barrier_wait(&L->go); /* L->t0 is set */
	const int64_t t0 = L->t0, interval = L->interval, end = L->duration > 0 ? t0 + L->duration : INT64_MAX;
	const long want = L->want;
	int fails = 0;
	if (interval == 0)
		sleep_until(t0);
	for (size_t j = 0; j < w->cap; j++) {
		json_t *key = json_array_get(w->keys, j % w->nkeys);
		int64_t due = 0, start = now_ns();
		if (interval > 0) {
			due = t0 + w->offset + (int64_t)j * interval;
			if (due >= end)
				break;
			if (start < due) {
				sleep_until(due);
				start = now_ns();
			}
		} else if (start >= end) {
			break;
		}
		int rc = op_on(s, L->connect, key, &len, err, sizeof err, &done);
		w->ns[j] = done - start;
		if (interval > 0)
			w->lag[j] = start > due ? start - due : 0;
		w->n = j + 1;
		rc = check_value(rc, len, want, err, sizeof err);
		if (rc == 0) {
			fails = 0;
			continue;
		}
		keep_error(w, j, err);
		if (++fails >= MAX_FAILS)
			break;
	}
}

/* serve is a connection's worker thread: it runs each part it is given,
 * and sleeps on its condition variable in between. */
static void *serve(void *arg) {
	struct thread *t = arg;
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* sleeps end within a few us of their time */
	if (t->b->thread_init)
		t->b->thread_init();
	pthread_mutex_lock(&t->mu);
	for (;;) {
		while (!t->job && !t->quit)
			pthread_cond_wait(&t->cv, &t->mu);
		if (!t->job)
			break;
		struct part *w = t->job;
		pthread_mutex_unlock(&t->mu);
		run(w);
		pthread_mutex_lock(&t->mu);
		t->job = NULL;
		pthread_cond_signal(&t->idle);
	}
	pthread_mutex_unlock(&t->mu);
	if (t->b->thread_end)
		t->b->thread_end();
	return NULL;
}

/* start_thread gives slot s its worker thread: 0, or an error number. */
static int start_thread(struct slot *s) {
	struct thread *t = calloc(1, sizeof *t);
	if (!t)
		return ENOMEM;
	t->b = s->b;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	pthread_cond_init(&t->idle, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WORKER_STACK);
	int rc = pthread_create(&t->th, &attr, serve, t);
	pthread_attr_destroy(&attr);
	if (rc) {
		pthread_cond_destroy(&t->idle);
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		free(t);
		return rc;
	}
	s->t = t;
	return 0;
}

/* stop_thread ends slot s's worker thread, if it has one (it is idle). */
static void stop_thread(struct slot *s) {
	struct thread *t = s->t;
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->quit = 1;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->th, NULL);
	pthread_cond_destroy(&t->idle);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
	s->t = NULL;
}

/* run_threads runs a load's parts a thread per connection: "" or why it
 * could not in msg. */
static void run_threads(struct load *L, struct part *w, size_t n, char *msg, size_t len) {
	for (size_t c = 0; c < n && !msg[0]; c++) {
		int rc = w[c].s->t ? 0 : start_thread(w[c].s);
		if (rc)
			snprintf(msg, len, "load: could not start a thread for %.128s: %s", w[c].s->id, strerror(rc));
	}
	if (msg[0])
		return;
	pthread_barrier_init(&L->warm, NULL, (unsigned)n + 1);
	pthread_barrier_init(&L->go, NULL, (unsigned)n + 1);
	for (size_t c = 0; c < n; c++) {
		struct thread *t = w[c].s->t;
		pthread_mutex_lock(&t->mu);
		t->job = &w[c];
		pthread_cond_signal(&t->cv);
		pthread_mutex_unlock(&t->mu);
	}
	pthread_barrier_wait(&L->warm);
	/* T0: far enough ahead that every thread is asleep, waiting for it. */
	L->t0 = now_ns() + 2000000 + 20000 * (int64_t)n;
	pthread_barrier_wait(&L->go);
	for (size_t c = 0; c < n; c++) { /* each part's thread is done with it, and with the barriers */
		struct thread *t = w[c].s->t;
		pthread_mutex_lock(&t->mu);
		while (t->job)
			pthread_cond_wait(&t->idle, &t->mu);
		pthread_mutex_unlock(&t->mu);
	}
	pthread_barrier_destroy(&L->warm);
	pthread_barrier_destroy(&L->go);
}

static void do_load(json_t *m) {
	json_t *ids = json_object_get(m, "ids");
	size_t n = json_array_size(ids);
	const char *first = json_string_value(json_array_get(ids, 0));
	char msg[512] = "";
	if (n == 0 || n > MAX_LOAD_CONNS) {
		snprintf(msg, sizeof msg, "load: %zu connections; this agent runs a load of 1 to %d", n, MAX_LOAD_CONNS);
		fail(first, msg);
		return;
	}
	struct load L = {0};
	struct part *w = calloc(n, sizeof *w);
	if (!w) {
		fail(first, "load: out of memory");
		return;
	}
	load_plan(m, &L, w, n, msg, sizeof msg);
	if (!msg[0])
		load_alloc(&L, w, n, msg, sizeof msg);
	if (!msg[0] && event_loop)
		ev_load(&L, w, n, msg, sizeof msg);
	else if (!msg[0])
		run_threads(&L, w, n, msg, sizeof msg);
	if (msg[0]) {
		fail(first, msg);
		load_free(w, n);
		return;
	}
	json_t *results = json_array();
	for (size_t c = 0; c < n; c++) {
		json_t *ns = json_array(), *errors = json_array();
		for (size_t j = 0; j < w[c].n; j++)
			json_array_append_new(ns, json_integer(w[c].ns[j]));
		for (size_t e = 0; e < w[c].nerr; e++)
			json_array_append_new(errors, json_pack("{s:I, s:s}", "index", (json_int_t)w[c].errs[e].index, "message",
				w[c].arena + w[c].errs[e].at));
		json_t *r = json_pack("{s:s, s:o, s:o}", "id", w[c].s->id, "ns", ns, "errors", errors);
		if (L.interval > 0) {
			json_t *lag = json_array();
			for (size_t j = 0; j < w[c].n; j++)
				json_array_append_new(lag, json_integer(w[c].lag[j]));
			json_object_set_new(r, "lag_ns", lag);
		}
		json_array_append_new(results, r);
	}
	load_free(w, n);
	say(json_pack("{s:s, s:o}", "type", "load_result", "results", results));
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

static void do_close(const char *id) {
	struct slot *s = find(id);
	if (!s) {
		fail(id, "no such connection");
		return;
	}
	stop_thread(s);
	s->b->close(s->conn);
	s->conn = NULL;
	json_decref(s->open);
	s->open = NULL;
	say(json_pack("{s:s, s:s}", "type", "closed", "id", id));
}

/* hello says what the agent is and, protocol 2, what it can do. */
static void hello(const struct backend *b) {
	char cc[64];
	snprintf(cc, sizeof cc, "gcc %d.%d", __GNUC__, __GNUC_MINOR__);
	const char *f[8];
	size_t nf = families(b->library, f, 8);
	json_t *fams = json_array();
	for (size_t i = 0; i < nf; i++)
		json_array_append_new(fams, json_string(f[i]));
	json_t *caps = json_pack("{s:o, s:b, s:s, s:b, s:i, s:b}", "families", fams, "tls", b->tls, "workers", event_loop ? "event-loop" : "threads",
		"open_loop", 1, "max_connections", MAX_LOAD_CONNS, "connect", !event_loop);
	say(json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s*, s:s*, s:o}", "type", "hello", "protocol", 2, "language", "c",
		"runtime_version", cc, "library", b->library, "library_version", b->version(),
		"mode", !strcmp(b->library, "hiredis") ? "resp2" : !strcmp(b->library, "libpq") || !strcmp(b->library, "libmariadb") ? "prepared" : NULL,
		"unprepared_mode", !strcmp(b->library, "libpq") ? "exec" : NULL, "capabilities", caps));
}

/* worker_model reads --workers MODEL before the target: 0, or -1 having
 * said why on stderr. */
static int worker_model(int *argc, char ***argv) {
	if (*argc < 3 || strcmp((*argv)[1], "--workers") != 0)
		return 0;
	const char *model = (*argv)[2];
	if (strcmp(model, "event-loop") == 0)
		event_loop = 1;
	else if (strcmp(model, "threads") != 0) {
		fprintf(stderr, "dbsock-agent: no worker model %s: give --workers threads or --workers event-loop\n", model);
		return -1;
	}
	*argc -= 2, *argv += 2;
	return 0;
}

int main(int argc, char **argv) {
	if (worker_model(&argc, &argv) < 0)
		return 2;
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: dbsock-agent [--workers threads|event-loop] FAMILY [LIBRARY]\n");
		return 2;
	}
	const struct backend *b = backend_for(argv[1], argc == 3 ? argv[2] : "");
	if (!b) {
		fprintf(stderr, "dbsock-agent: no library %s for protocol family %s in this build\n", argc == 3 ? argv[2] : "(default)", argv[1]);
		return 2;
	}
	if (event_loop && !b->send) {
		fprintf(stderr, "dbsock-agent: %s has no asynchronous API this agent's event loop drives: run it with --workers threads\n", b->library);
		return 2;
	}
	/* A write to a connection its server closed (or that the event loop
	 * shut) fails with EPIPE, which the library reports as the op's error:
	 * hiredis, for one, does not keep SIGPIPE from killing the agent. */
	signal(SIGPIPE, SIG_IGN);
	hello(b);
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
			do_block(m, id);
		else if (strcmp(type, "load") == 0)
			do_load(m);
		else if (strcmp(type, "overhead") == 0)
			do_overhead(m);
		else if (strcmp(type, "close") == 0)
			do_close(id);
		else
			fail(id, "unknown message type");
		json_decref(m);
	}
	free(line);
	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i].conn) {
			stop_thread(&conns[i]);
			conns[i].b->close(conns[i].conn);
		}
	return 0;
}
