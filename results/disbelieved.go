package results

// voidDisbelieved strips every run of a case of which one run is
// Disbelieved of its measurements, keeping what it was, what it
// connected to and why it stopped: the checks that refuse a client's
// report weigh its blocks over a window, so the blocks before the one
// that failed are the same client's word, and no figure of the case is
// shown. A report whose case an audit refused is such a report whether
// it was just measured or read from a file.
func (r *Report) voidDisbelieved() {
	void := map[Case]string{}
	for _, run := range r.Runs {
		if run.Disbelieved {
			void[run.Case] = run.Error
		}
	}
	for i := range r.Runs {
		why, ok := void[r.Runs[i].Case]
		if !ok {
			continue
		}
		run := &r.Runs[i]
		if run.Error == "" {
			run.Error = "another run of its case was refused: " + why
		}
		*run = Run{Case: run.Case, Client: run.Client, Transport: run.Transport, Instance: run.Instance, Round: run.Round,
			Connection: run.Connection, Failure: Failure{Incomplete: true, Error: run.Error, Disbelieved: true}}
	}
}
