package trace

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/metalsim/metalsim/sim"
)

// A long run draws a progress line on a terminal's stderr: after
// progressDelay, every progressEvery. Off a terminal nothing is drawn, so
// outputs stay byte-identical.
const (
	progressDelay = time.Second
	progressEvery = 250 * time.Millisecond
)

// ProgressLine renders a run's progress.
func ProgressLine(done, total int64) string {
	if total <= 0 {
		return "simulating"
	}
	return fmt.Sprintf("simulating: %3d %% of %.3g threadgroups", min(done, total)*100/total, float64(total))
}

// StartProgress gives s a Progress and, when stderr is a terminal, draws its
// line there while the run lasts; stop erases it. Call stop before printing
// the results.
func StartProgress(stderr io.Writer, s *sim.Simulator) (stop func()) {
	if terminal(stderr) == nil {
		return func() {}
	}
	p := &sim.Progress{}
	s.SetProgress(p)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	drawn := false
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-quit:
			return
		case <-time.After(progressDelay):
		}
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			fmt.Fprintf(stderr, "\r%s\033[K", ProgressLine(p.Counts()))
			drawn = true
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
		if drawn {
			fmt.Fprint(stderr, "\r\033[K")
		}
	}
}

// terminal returns w as a file when it is a terminal (for progress bars).
func terminal(w io.Writer) *os.File {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return f
}

// SweepProgress draws a sweep's progress bar on a terminal; nil draws
// nothing.
type SweepProgress struct {
	w      *os.File
	total  int
	start  time.Time
	last   time.Time
	label  string
	closed bool
}

// NewSweepProgress returns the progress bar of total points on stderr, or
// nil when stderr is not a terminal.
func NewSweepProgress(stderr io.Writer, label string, total int) *SweepProgress {
	f := terminal(stderr)
	if f == nil {
		return nil
	}
	return &SweepProgress{w: f, total: total, start: time.Now(), label: label}
}

// Update draws the bar for done points (at most every 100 ms, and at the
// end).
func (p *SweepProgress) Update(done int) {
	if p == nil || p.closed {
		return
	}
	now := time.Now()
	if done < p.total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	fill := width * done / max(p.total, 1)
	el := now.Sub(p.start).Seconds()
	eta := ""
	if done > 0 && done < p.total {
		eta = fmt.Sprintf(", ETA %.0f s", el/float64(done)*float64(p.total-done))
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d points, %.1f s%s\033[K", p.label, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), done, p.total, el, eta)
	if done >= p.total {
		fmt.Fprintln(p.w)
		p.closed = true
	}
}
