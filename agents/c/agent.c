/*
 * dbsock's C agent (docs/agents.md): dbsock-agent TARGET [LIBRARY].
 *
 * Speaks the agent protocol on stdin and stdout (JSON lines, parsed and
 * written with Debian's libjansson), opens connections with one C client
 * library (backends.c), times each op of a block on CLOCK_MONOTONIC,
 * checks each value's length and returns each op's latency. A load
 * (protocol 2) runs many connections at once, a thread each, closed
 * loop or paced at an offered rate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "agent.h"

/* MAX_CONNS is the most connections open at once; MAX_LOAD_CONNS the most
 * one load may have (the hello's max_connections). */
#define MAX_CONNS 1024
#define MAX_LOAD_CONNS 256
/* MAX_LOAD_OPS is the most ops one load may do in all (dbsock sends at
 * most 100,000), MAX_WARMUP the most untimed ops per connection. */
#define MAX_LOAD_OPS 1000000
#define MAX_WARMUP 100000
/* MAX_SPAN_NS bounds a load's interval, offsets and duration (an hour),
 * so that no due time overflows. */
#define MAX_SPAN_NS ((int64_t)3600 * 1000000000)
/* MAX_FAILS failed ops in a row end a connection's ops in a load. */
#define MAX_FAILS 10
/* ERR_ARENA is the room for one connection's error messages in a load;
 * WORKER_STACK a worker thread's stack. */
#define ERR_ARENA (16 << 10)
#define WORKER_STACK (1 << 20)

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct slot {
	char id[128];
	const struct backend *b;
	void *conn;
	json_t *open; /* its open message, less the token: the connect scenario's
	               * connections open with it, unnamed, as an application's */
	struct thread *t; /* its worker thread, from its first load to its close */
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

/* check_value: an op that succeeded (rc 0) but read no value, or one of
 * another length than want, is a failed op, its message in err. */
static int check_value(int rc, long len, long want, char *err, size_t size) {
	if (rc != 0 || len == want)
		return rc;
	if (len < 0)
		snprintf(err, size, "no value");
	else
		snprintf(err, size, "value of %ld bytes, want %ld", len, want);
	return -1;
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

/* scenario_of reads a block's or a load's scenario: 1 for connect, 0 for
 * lookups on the connection, -1 (msg set) for another. */
static int scenario_of(json_t *m, char *msg, size_t len) {
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

struct load {
	long warmup, want;
	int connect; /* the connect scenario: each op on a connection of its own */
	int64_t interval, duration, t0;
	pthread_barrier_t warm, go;
};

struct op_error {
	uint32_t index, at; /* at: the message's place in the part's arena */
};

/* A part is one connection's share of a load. */
struct part {
	struct load *load;
	struct slot *s;
	json_t *keys;
	size_t nkeys;
	int64_t offset;
	size_t cap, n; /* the most ops, and those done */
	int64_t *ns, *lag;
	struct op_error *errs;
	size_t nerr;
	char *arena;
	size_t used;
};

struct thread {
	pthread_t th;
	const struct backend *b;
	pthread_mutex_t mu;
	pthread_cond_t cv, idle; /* cv: a job or quit; idle: the job is done */
	struct part *job; /* the part to run; NULL when idle */
	int quit;
};

static const char not_kept[] = "(its message not kept: this connection's errors filled 16 KiB)";

static void sleep_until(int64_t t) {
	struct timespec ts = {t / 1000000000, t % 1000000000};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* keep_error keeps op j's error; a message the same as the error before's
 * is kept once. */
static void keep_error(struct part *w, size_t j, const char *msg) {
	struct op_error *e = &w->errs[w->nerr++];
	e->index = (uint32_t)j;
	if (w->nerr > 1 && strcmp(w->arena + e[-1].at, msg) == 0) {
		e->at = e[-1].at;
		return;
	}
	size_t len = strnlen(msg, 511);
	if (w->used + len + 1 > ERR_ARENA) {
		e->at = 0; /* not_kept */
		return;
	}
	memcpy(w->arena + w->used, msg, len);
	w->arena[w->used + len] = 0;
	e->at = (uint32_t)w->used;
	w->used += len + 1;
}

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

/* load_int reads m's integer k (absent or null: 0) into out: 0, or -1 with
 * msg set when it is not an integer from lo to hi. */
static int load_int(json_t *m, const char *k, int64_t lo, int64_t hi, int64_t *out, char *msg, size_t n) {
	json_t *v = json_object_get(m, k);
	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi) {
		*out = json_integer_value(v);
		return 0;
	}
	snprintf(msg, n, "load: %s must be an integer from %lld to %lld", k, (long long)lo, (long long)hi);
	return -1;
}

/* load_plan checks a load and fills its parts (n of them): "" or what is
 * wrong with it in msg. */
static void load_plan(json_t *m, struct load *L, struct part *w, size_t n, char *msg, size_t len) {
	json_t *ids = json_object_get(m, "ids"), *keys = json_object_get(m, "keys"), *offs = json_object_get(m, "offsets_ns");
	int64_t warmup, want, max_ops;
	if (load_int(m, "warmup", 0, MAX_WARMUP, &warmup, msg, len) || load_int(m, "value_length", 0, INT32_MAX, &want, msg, len) ||
	    load_int(m, "interval_ns", 0, MAX_SPAN_NS, &L->interval, msg, len) ||
	    load_int(m, "duration_ns", 0, MAX_SPAN_NS, &L->duration, msg, len) || load_int(m, "max_ops", 0, MAX_LOAD_OPS, &max_ops, msg, len))
		return;
	L->warmup = (long)warmup, L->want = (long)want;
	if ((L->connect = scenario_of(m, msg, len)) < 0)
		return;
	if (json_array_size(keys) != n) {
		snprintf(msg, len, "load: %zu ids and %zu lists of keys: one list per id", n, json_array_size(keys));
		return;
	}
	if (L->interval > 0 && offs && !json_is_null(offs) && json_array_size(offs) != n) {
		snprintf(msg, len, "load: %zu ids and %zu offsets_ns: one offset per id", n, json_array_size(offs));
		return;
	}
	if (L->duration > 0 && L->interval == 0 && max_ops == 0) {
		snprintf(msg, len, "load: a closed loop for duration_ns needs max_ops, the most ops per connection");
		return;
	}
	size_t total = 0;
	for (size_t c = 0; c < n; c++) {
		const char *id = json_string_value(json_array_get(ids, c));
		struct slot *s = id ? find(id) : NULL;
		if (!s) {
			snprintf(msg, len, "load: ids[%zu] %.128s is no open connection", c, id ? id : "(not a string)");
			return;
		}
		for (size_t d = 0; d < c; d++)
			if (w[d].s == s) {
				snprintf(msg, len, "load: %.128s is given twice: a connection is run by one thread", id);
				return;
			}
		w[c] = (struct part){.load = L, .s = s, .keys = json_array_get(keys, c)};
		w[c].nkeys = json_array_size(w[c].keys);
		if (w[c].nkeys == 0) {
			snprintf(msg, len, "load: no keys for %.128s", id);
			return;
		}
		if (L->interval > 0 && offs && !json_is_null(offs)) {
			json_t *o = json_array_get(offs, c);
			if (!json_is_integer(o) || json_integer_value(o) < 0 || json_integer_value(o) > MAX_SPAN_NS) {
				snprintf(msg, len, "load: offsets_ns[%zu] must be an integer from 0 to %lld", c, (long long)MAX_SPAN_NS);
				return;
			}
			w[c].offset = json_integer_value(o);
		}
		size_t cap = w[c].nkeys;
		if (L->duration > 0) {
			cap = (size_t)max_ops;
			if (L->interval > 0) { /* the ops due before T0 + duration */
				int64_t room = L->duration - w[c].offset;
				size_t due = room > 0 ? (size_t)((room + L->interval - 1) / L->interval) : 0;
				if (max_ops == 0 || due < cap)
					cap = due;
			}
		}
		w[c].cap = cap;
		total += cap > MAX_LOAD_OPS ? MAX_LOAD_OPS + 1 : cap;
		if (total > MAX_LOAD_OPS) {
			snprintf(msg, len, "load: over %d ops in all; split it", MAX_LOAD_OPS);
			return;
		}
	}
}

static void load_free(struct part *w, size_t n) {
	for (size_t c = 0; c < n; c++) {
		free(w[c].ns);
		free(w[c].lag);
		free(w[c].errs);
		free(w[c].arena);
	}
	free(w);
}

/* load_alloc allocates and touches each part's arrays: "" or what failed in msg. */
static void load_alloc(struct load *L, struct part *w, size_t n, char *msg, size_t len) {
	for (size_t c = 0; c < n; c++) {
		size_t cap = w[c].cap ? w[c].cap : 1;
		w[c].ns = malloc(cap * sizeof *w[c].ns);
		w[c].lag = L->interval > 0 ? malloc(cap * sizeof *w[c].lag) : NULL;
		w[c].errs = malloc(cap * sizeof *w[c].errs);
		w[c].arena = malloc(ERR_ARENA);
		if (!w[c].ns || (L->interval > 0 && !w[c].lag) || !w[c].errs || !w[c].arena) {
			snprintf(msg, len, "load: out of memory for %zu ops", cap);
			return;
		}
		/* Touched now, not in the timed part. */
		memset(w[c].ns, 0, cap * sizeof *w[c].ns);
		if (w[c].lag)
			memset(w[c].lag, 0, cap * sizeof *w[c].lag);
		memcpy(w[c].arena, not_kept, sizeof not_kept);
		w[c].used = sizeof not_kept;
	}
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
	for (size_t c = 0; c < n && !msg[0]; c++) {
		int rc = w[c].s->t ? 0 : start_thread(w[c].s);
		if (rc)
			snprintf(msg, sizeof msg, "load: could not start a thread for %.128s: %s", w[c].s->id, strerror(rc));
	}
	if (msg[0]) {
		fail(first, msg);
		load_free(w, n);
		return;
	}
	pthread_barrier_init(&L.warm, NULL, (unsigned)n + 1);
	pthread_barrier_init(&L.go, NULL, (unsigned)n + 1);
	for (size_t c = 0; c < n; c++) {
		struct thread *t = w[c].s->t;
		pthread_mutex_lock(&t->mu);
		t->job = &w[c];
		pthread_cond_signal(&t->cv);
		pthread_mutex_unlock(&t->mu);
	}
	pthread_barrier_wait(&L.warm);
	/* T0: far enough ahead that every thread is asleep, waiting for it. */
	L.t0 = now_ns() + 2000000 + 20000 * (int64_t)n;
	pthread_barrier_wait(&L.go);
	for (size_t c = 0; c < n; c++) { /* each part's thread is done with it, and with the barriers */
		struct thread *t = w[c].s->t;
		pthread_mutex_lock(&t->mu);
		while (t->job)
			pthread_cond_wait(&t->idle, &t->mu);
		pthread_mutex_unlock(&t->mu);
	}
	pthread_barrier_destroy(&L.warm);
	pthread_barrier_destroy(&L.go);
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
	json_t *caps = json_pack("{s:o, s:b, s:s, s:b, s:i, s:b}", "families", fams, "tls", b->tls, "workers", "threads", "open_loop", 1,
		"max_connections", MAX_LOAD_CONNS, "connect", 1);
	say(json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s*, s:s*, s:o}", "type", "hello", "protocol", 2, "language", "c",
		"runtime_version", cc, "library", b->library, "library_version", b->version(),
		"mode", !strcmp(b->library, "hiredis") ? "resp2" : !strcmp(b->library, "libpq") || !strcmp(b->library, "libmariadb") ? "prepared" : NULL,
		"unprepared_mode", !strcmp(b->library, "libpq") ? "exec" : NULL, "capabilities", caps));
}

int main(int argc, char **argv) {
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: dbsock-agent FAMILY [LIBRARY]\n");
		return 2;
	}
	const struct backend *b = backend_for(argv[1], argc == 3 ? argv[2] : "");
	if (!b) {
		fprintf(stderr, "dbsock-agent: no library %s for protocol family %s in this build\n", argc == 3 ? argv[2] : "(default)", argv[1]);
		return 2;
	}
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
