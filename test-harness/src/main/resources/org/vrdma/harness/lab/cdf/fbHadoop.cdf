# Facebook Hadoop cluster flow sizes, published in
#   A. Roy, H. Zeng, J. Bagga, G. Porter, A. C. Snoeren, "Inside the Social Network's (Datacenter)
#   Network", ACM SIGCOMM 2015 (Hadoop cluster flow-size distribution),
# as tabulated for the HPCC paper's simulations (Y. Li et al., "HPCC: High Precision Congestion
# Control", ACM SIGCOMM 2019; traffic_gen/FbHdp_distribution.txt of its simulator repository).
# Columns: flow size in bytes, cumulative percent of flows; linear interpolation between points.
0 0
100 1
200 2
300 5
350 15
400 20
500 30
600 40
700 50
1000 60
2000 67
7000 70
30000 72
50000 82
80000 87
120000 90
300000 95
1000000 97.5
2000000 99
10000000 100
