package hw_test

import (
	"fmt"
	"strings"

	"github.com/metalsim/metalsim/hw"
)

func ExampleParseCase() {
	op, p, err := hw.ParseCase("MUL_MAT(type_a=q4_0,type_b=f32,m=4096,n=8,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1)")
	if err != nil {
		fmt.Println(err)
		return
	}
	n, _ := p.Int("n")
	per, _ := p.Ints("per")
	ta, _ := p.String("type_a")
	_, err = p.Int("n_mats")
	fmt.Println(op, ta, n, per)
	fmt.Println(err)
	// Output:
	// MUL_MAT q4_0 8 [0 1 2 3]
	// param n_mats: missing parameter (have type_a,type_b,m,n,k,bs,nr,per,v,o)
}

func ExampleParseLog() {
	// Constructed to the documented format, not captured.
	out := "Backend 1/1: MTL0\n" +
		"  Device description: Apple M1 Pro\n" +
		"  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=32,k=2048):" +
		"      375 runs -  2703.90 us/run - 805.31 MFLOP/run - \x1b[1;34m297.83 GFLOPS\x1b[0m\n" +
		"  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=64,k=2048):" +
		"      315 runs -  3192.10 us/ru\n"
	l, err := hw.ParseLog(strings.NewReader(out), "m1.log")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range l.Rows {
		n, _ := r.Params.Int("n")
		fmt.Printf("%s %s n=%d %.2f us, %.4g FLOP/s\n", r.Chip, r.Op, n, r.USPerRun, r.FLOPS)
	}
	for _, e := range l.Errors {
		fmt.Println(e.Error())
	}
	// Output:
	// Apple M1 Pro MUL_MAT_ID n=32 2703.90 us, 2.978e+11 FLOP/s
	// m1.log: line 4: MUL_MAT_ID perf line: truncated: want "us/run", the line ends with "us/ru"
}

func ExampleParseTSV() {
	tsv := "# chip\tgpu_path\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\tstatistic\n" +
		"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\thalftile\t1696.0\tmin-of-3\n"
	rows, err := hw.ParseTSV(strings.NewReader(tsv), "m1.tsv")
	if err != nil {
		fmt.Println(err)
		return
	}
	r := rows[0]
	fmt.Println(r.Op+"("+r.Params.Vars()+")", r.Variant, r.USPerRun)
	// Output:
	// MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=32,k=2048) halftile 1696
}
