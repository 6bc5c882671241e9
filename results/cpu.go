package results

// CPU is what the client (the process that did the ops: dbsock's own, or an agent's) and the server spent
// over timed windows, in total and per successful op. Server figures are
// nil when the server's processes could not be seen (ServerMeasuredBy says
// why).
type CPU struct {
	Ops            int64    `json:"ops"`
	ClientNs       int64    `json:"client_ns"`
	ClientCsw      int64    `json:"client_csw"`
	ClientNsPerOp  float64  `json:"client_ns_per_op"`
	ClientCswPerOp float64  `json:"client_csw_per_op"`
	ServerNs       *int64   `json:"server_ns,omitempty"`
	ServerCsw      *int64   `json:"server_csw,omitempty"`
	ServerNsPerOp  *float64 `json:"server_ns_per_op,omitempty"`
	ServerCswPerOp *float64 `json:"server_csw_per_op,omitempty"`
	// ServerMeasuredBy says how the server's figures were read, or
	// "not measured: " and why.
	ServerMeasuredBy string `json:"server_measured_by"`
	// Read and write system calls (as /proc/PID/io counts them: read- and
	// write-family calls, not recv/send) per op on each side. A side whose
	// count is absent was not counted: the server's could not be read
	// (ServerSyscalls nil), or a side counted fewer than one in two ops, which
	// means it moves its socket's bytes with calls /proc/PID/io does not
	// count (recv/send, recvmsg/sendmsg), not that it made none: its per-op
	// figure is then absent (ClientSyscallsPerOp, ServerSyscallsPerOp),
	// never a zero. ClientSyscalls is the client's total as counted.
	ClientSyscalls      int64    `json:"client_syscalls"`
	ServerSyscalls      *int64   `json:"server_syscalls,omitempty"`
	ClientSyscallsPerOp *float64 `json:"client_syscalls_per_op,omitempty"`
	ServerSyscallsPerOp *float64 `json:"server_syscalls_per_op,omitempty"`
	// The time each side's threads were runnable but waited for a CPU
	// (the run queue: Linux's schedstat), in all and per op; absent where
	// it was not read. On a CPU that client and server share, the server
	// woken by a request waits until the client gives the CPU up: what a
	// client does between its write and its blocking read is the server's
	// wait (docs/method.md).
	ClientWaitNs      *int64   `json:"client_wait_ns,omitempty"`
	ServerWaitNs      *int64   `json:"server_wait_ns,omitempty"`
	ClientWaitNsPerOp *float64 `json:"client_wait_ns_per_op,omitempty"`
	ServerWaitNsPerOp *float64 `json:"server_wait_ns_per_op,omitempty"`
	// The share of the server's CPU (ServerNs) that a hop in front of it
	// (a proxy dbsock started) spent, in all and per op, and how it was
	// read; absent without a hop.
	HopNs         *int64   `json:"hop_ns,omitempty"`
	HopNsPerOp    *float64 `json:"hop_ns_per_op,omitempty"`
	HopMeasuredBy string   `json:"hop_measured_by,omitempty"`
}

// WithHop records the hop's share of the server's CPU, ns in all, read
// by by.
func (c *CPU) WithHop(ns int64, by string) *CPU {
	c.HopNs, c.HopMeasuredBy = &ns, by
	if c.Ops > 0 {
		v := float64(ns) / float64(c.Ops)
		c.HopNsPerOp = &v
	}
	return c
}

// WithWaits records both sides' time waiting for a CPU (nil: not read)
// and derives it per op.
func (c *CPU) WithWaits(client, server *int64) *CPU {
	c.ClientWaitNs, c.ServerWaitNs = client, server
	c.ClientWaitNsPerOp, c.ServerWaitNsPerOp = nil, nil
	if client != nil && c.Ops > 0 {
		v := float64(*client) / float64(c.Ops)
		c.ClientWaitNsPerOp = &v
	}
	if server != nil && c.Ops > 0 {
		v := float64(*server) / float64(c.Ops)
		c.ServerWaitNsPerOp = &v
	}
	return c
}

// addWaits is a + b, nil when either is.
func addWaits(a, b *int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	v := *a + *b
	return &v
}

// WithSyscalls records the read and write system calls of both sides
// (server nil when not measured) and derives them per op; a side that
// counted none over its ops has no per-op figure (see CPU).
func (c *CPU) WithSyscalls(client int64, server *int64) *CPU {
	c.ClientSyscalls, c.ServerSyscalls = client, server
	c.ClientSyscallsPerOp, c.ServerSyscallsPerOp = perOp(client, c.Ops), nil
	if server != nil {
		c.ServerSyscallsPerOp = perOp(*server, c.Ops)
	}
	return c
}

// perOp is calls read and write calls over ops, or nil when that is not
// a count of a side's socket calls: no ops, or fewer than one call in
// two ops. A side that moves each request's bytes with read and write
// makes at least one such call per op; one that counted fewer moved them
// with calls /proc/PID/io does not count (recv and send: libpq,
// libmariadb), and what it counted was its other files' (an agent's
// protocol on its stdin and stdout: 0.01 per op).
func perOp(calls, ops int64) *float64 {
	if ops <= 0 || calls <= 0 || 2*calls < ops {
		return nil
	}
	v := float64(calls) / float64(ops)
	return &v
}

// SyscallsCounted says whether c's read and write calls per op were
// counted on the client's side and on the server's: a report says "not
// counted" for a side that was not, never 0. A report from an older dbsock
// that recorded 0 calls over its ops gets the same answer.
func (c *CPU) SyscallsCounted() (client, server bool) {
	return c.ClientSyscallsPerOp != nil && *c.ClientSyscallsPerOp >= 0.5,
		c.ServerSyscallsPerOp != nil && *c.ServerSyscallsPerOp >= 0.5
}

// NewCPU derives the per-op figures from totals; server totals are nil
// when the server was not measured.
func NewCPU(ops, clientNs, clientCsw int64, serverNs, serverCsw *int64, by string) *CPU {
	c := &CPU{Ops: ops, ClientNs: clientNs, ClientCsw: clientCsw, ServerNs: serverNs, ServerCsw: serverCsw, ServerMeasuredBy: by}
	if ops <= 0 {
		return c
	}
	c.ClientNsPerOp, c.ClientCswPerOp = float64(clientNs)/float64(ops), float64(clientCsw)/float64(ops)
	if serverNs != nil {
		ns := float64(*serverNs) / float64(ops)
		c.ServerNsPerOp = &ns
	}
	if serverNs != nil && serverCsw != nil { // nil where the OS does not count them (macOS)
		csw := float64(*serverCsw) / float64(ops)
		c.ServerCswPerOp = &csw
	}
	return c
}

// Pool adds o's totals to c's (nil c starts empty); the server is measured
// only when both were.
func (c *CPU) Pool(o *CPU) *CPU {
	if o == nil {
		return c
	}
	if c == nil {
		return poolHop(NewCPU(o.Ops, o.ClientNs, o.ClientCsw, o.ServerNs, o.ServerCsw, o.ServerMeasuredBy).WithSyscalls(o.ClientSyscalls, o.ServerSyscalls).
			WithWaits(o.ClientWaitNs, o.ServerWaitNs), nil, o)
	}
	var sns, scsw, ssys *int64
	if c.ServerNs != nil && o.ServerNs != nil {
		a := *c.ServerNs + *o.ServerNs
		sns = &a
	}
	if sns != nil && c.ServerCsw != nil && o.ServerCsw != nil {
		b := *c.ServerCsw + *o.ServerCsw
		scsw = &b
	}
	if c.ServerSyscalls != nil && o.ServerSyscalls != nil {
		v := *c.ServerSyscalls + *o.ServerSyscalls
		ssys = &v
	}
	by := c.ServerMeasuredBy
	if sns == nil && o.ServerNs == nil {
		by = o.ServerMeasuredBy
	}
	return poolHop(NewCPU(c.Ops+o.Ops, c.ClientNs+o.ClientNs, c.ClientCsw+o.ClientCsw, sns, scsw, by).WithSyscalls(c.ClientSyscalls+o.ClientSyscalls, ssys).
		WithWaits(addWaits(c.ClientWaitNs, o.ClientWaitNs), addWaits(c.ServerWaitNs, o.ServerWaitNs)), c, o)
}

// poolHop is out, c and o pooled, with the hop's share of both (o's
// alone when c is nil); none when either has none.
func poolHop(out, c, o *CPU) *CPU {
	switch {
	case o.HopNs == nil || out.ServerNs == nil:
		return out
	case c == nil:
		return out.WithHop(*o.HopNs, o.HopMeasuredBy)
	case c.HopNs != nil:
		return out.WithHop(*c.HopNs+*o.HopNs, o.HopMeasuredBy)
	}
	return out
}

// ServerExec is the server's own account of executing the lookups in the
// timed windows (e.g. a server's command statistics): calls, total time, time per
// call, and where the figure comes from.
type ServerExec struct {
	Calls     int64   `json:"calls"`
	ExecNs    float64 `json:"exec_ns"`
	NsPerCall float64 `json:"ns_per_call"`
	Source    string  `json:"source"`
}

// Pool adds o to e (nil e starts empty).
func (e *ServerExec) Pool(o *ServerExec) *ServerExec {
	if o == nil {
		return e
	}
	out := &ServerExec{Source: o.Source}
	if e != nil {
		out.Calls, out.ExecNs = e.Calls, e.ExecNs
	}
	out.Calls += o.Calls
	out.ExecNs += o.ExecNs
	if out.Calls > 0 {
		out.NsPerCall = out.ExecNs / float64(out.Calls)
	}
	return out
}
