/* The C agent's back ends: one per client library (backends.c). */
#ifndef DBSOCK_AGENT_H
#define DBSOCK_AGENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct backend {
	const char *library;
	/* family is the wire protocol it speaks (an open's "family"); tls
	 * whether its library can open the tls path. */
	const char *family;
	int tls;
	const char *(*version)(void);
	/* open opens the connection an open message m describes, adds what it
	 * knows of it (conn_id, local_addr) to reply, and returns it; NULL
	 * with err set when it cannot. */
	void *(*open)(json_t *m, json_t *reply, char *err, size_t errlen);
	/* op looks key up: 0 with *len the value's length (-1 for none), or
	 * -1 with err set. */
	int (*op)(void *c, json_t *key, long *len, char *err, size_t errlen);
	void (*close)(void *c);
	/* thread_init and thread_end, where the library needs them, are
	 * called by each worker thread of a load before and after its ops. */
	void (*thread_init)(void);
	void (*thread_end)(void);
	/* The event-loop model's calls (eventloop.c), NULL where the library
	 * has no asynchronous API. nonblock puts the connection in (on 1) or
	 * out of (on 0) non-blocking mode and returns its socket, or -1 with
	 * err set. send starts the lookup of key, and flush writes what it
	 * could not yet: each returns 1 while output waits for the socket to
	 * be writable (then flush), 0 once it is all written, -1 with err set.
	 * recv reads what the socket has: 1 once the lookup is answered, with
	 * *len its value's length (-1 for none), 0 while it is not, -1 with
	 * err set when it failed. */
	int (*nonblock)(void *c, int on, char *err, size_t errlen);
	int (*send)(void *c, json_t *key, char *err, size_t errlen);
	int (*flush)(void *c, char *err, size_t errlen);
	int (*recv)(void *c, long *len, char *err, size_t errlen);
};

/* The ping-pong of dbsock's own servers (floor, echo) through libc (libc.c). */
const char *libc_version(void);
void *pp_open(json_t *m, json_t *reply, char *err, size_t errlen);
int pp_op(void *c, json_t *key, long *len, char *err, size_t errlen);
void pp_close(void *c);

/* backend_for is library's back end for a protocol family (the first
 * one of the family when library is ""), NULL when it has none. */
const struct backend *backend_for(const char *family, const char *library);
/* families writes the families library speaks into out (at most n). */
size_t families(const char *library, const char **out, size_t n);

#endif
