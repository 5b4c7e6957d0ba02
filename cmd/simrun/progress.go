package main

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

// progressLine renders a run's progress.
func progressLine(done, total int64) string {
	if total <= 0 {
		return "simulating"
	}
	return fmt.Sprintf("simulating: %3d %% of %.3g threadgroups", min(done, total)*100/total, float64(total))
}

// startProgress gives s a Progress and, when stderr is a terminal, draws its
// line there while the run lasts; stop erases it. Call stop before printing
// the results.
func startProgress(stderr io.Writer, s *sim.Simulator) (stop func()) {
	if stderrTerminal(stderr) == nil {
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
			fmt.Fprintf(stderr, "\r%s\033[K", progressLine(p.Counts()))
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

// stderrTerminal returns w as a file when it is a terminal (for progress bars).
func stderrTerminal(w io.Writer) *os.File {
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

// sweepProgress draws a progress bar on a terminal; nil draws nothing.
type sweepProgress struct {
	w      *os.File
	total  int
	start  time.Time
	last   time.Time
	label  string
	closed bool
}

func newSweepProgress(stderr io.Writer, label string, total int) *sweepProgress {
	f := stderrTerminal(stderr)
	if f == nil {
		return nil
	}
	return &sweepProgress{w: f, total: total, start: time.Now(), label: label}
}

func (p *sweepProgress) update(done int) {
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
