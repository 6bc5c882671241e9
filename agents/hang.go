package agents

import "time"

// OpenLimit is how long the timing loop lets the agent's open take: a
// second more than dbsock's own wait for the agent's answer (the op
// timeout the agent is given for its library, and the grace), so that an
// agent that never answers is named as the one that hung, and a server
// that never answers is what the agent's own error says.
func (d *Driver) OpenLimit(timeout time.Duration) time.Duration {
	return max(timeout, d.agent.limits.wait(0)+time.Second)
}
