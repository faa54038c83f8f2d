# bytes cumulative-percent
0 0
4096 50
65536 100
