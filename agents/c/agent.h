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
