module github.com/metalsim/metalsim

go 1.26
