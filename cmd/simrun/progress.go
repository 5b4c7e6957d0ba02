package main

import (
	"fmt"
	"io"
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
