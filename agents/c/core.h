/*
 * The C agent's core, shared by its two worker models (docs/agents.md): a
 * connection's slot, a load and its parts (agent.c runs a part a thread
 * per connection, eventloop.c all of them from one event loop), and what
 * both do alike: plan a load (load.c), time an op, keep its error.
 */
#ifndef DBSOCK_CORE_H
#define DBSOCK_CORE_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
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

static inline int64_t now_ns(void) {
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

/* find is the open connection of that id, or NULL. */
struct slot *find(const char *id);
/* scenario_of reads a block's or a load's scenario: 1 for connect, 0 for
 * lookups on the connection, -1 (msg set) for another. */
int scenario_of(json_t *m, char *msg, size_t len);
/* check_value: an op that succeeded (rc 0) but read no value, or one of
 * another length than want, is a failed op, its message in err. */
int check_value(int rc, long len, long want, char *err, size_t size);
/* sleep_until sleeps to t on CLOCK_MONOTONIC. */
void sleep_until(int64_t t);
/* keep_error keeps op j's error; a message the same as the error before's
 * is kept once. */
void keep_error(struct part *w, size_t j, const char *msg);
/* load_plan checks a load and fills its parts (n of them): "" or what is
 * wrong with it in msg. */
void load_plan(json_t *m, struct load *L, struct part *w, size_t n, char *msg, size_t len);
/* load_alloc allocates and touches each part's arrays: "" or what failed in msg. */
void load_alloc(struct load *L, struct part *w, size_t n, char *msg, size_t len);
void load_free(struct part *w, size_t n);
/* ev_load runs a load's parts from one event loop in this thread
 * (eventloop.c): "" or why it could not in msg. */
void ev_load(struct load *L, struct part *w, size_t n, char *msg, size_t len);

#endif
