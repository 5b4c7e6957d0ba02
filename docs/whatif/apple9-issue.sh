#!/bin/sh
# The Apple9 issue-interval what-if of docs/model.md ("Apple9 issue"): every
# kernel of apple9-kernels.log (its times are placeholders) on copies of an
# Apple9 chip with sg_issue_interval_clk set to 1, 2, 3 and 5, printed as
# predicted µs. Run from the repository root: sh docs/whatif/apple9-issue.sh [CHIP]
chip=${1:-M4 Pro 20-core GPU}
dir=$(mktemp -d)
go build -o "$dir/simrun" ./cmd/simrun
"$dir/simrun" chips --show "$chip" > "$dir/chip.json"
for v in 1 2 3 5; do
	jq ".sg_issue_interval_clk.value = $v | del(.bins)" "$dir/chip.json" > "$dir/i$v.json"
	echo "sg_issue_interval_clk = $v"
	"$dir/simrun" validate --draws 2 --format json --chip-file "$dir/i$v.json" docs/whatif/apple9-kernels.log 2>/dev/null |
		jq -r '.rows[] | "\(.kernel) \(.type_a) m=\(.m) k=\(.k) n=\(.n) \(.predicted_us)"'
done
rm -r "$dir"
