package agents

// ModeNotSaid is the mode of an agent's case whose hello did not say how
// its library does the op, where the target has modes: dbsock does not
// know it, and Go's driver's mode would be a guess.
const ModeNotSaid = "mode not said"

// Mode implements drivers.Driver: how the agent's library did the op, as
// its hello said (Hello.Mode, or Hello.UnpreparedMode where the lookup
// must not be prepared), not the mode of the Go driver d embeds; "" where
// the target has no modes.
func (d *Driver) Mode() string {
	if d.Driver.Mode() == "" {
		return ""
	}
	h := d.agent.Hello()
	m := h.Mode
	if d.lookup.NoPrepare && h.UnpreparedMode != "" {
		m = h.UnpreparedMode
	}
	if m == "" {
		return ModeNotSaid
	}
	return m
}
