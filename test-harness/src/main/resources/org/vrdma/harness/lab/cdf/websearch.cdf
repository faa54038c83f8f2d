# Web search flow sizes: the workload measured in a production web-search cluster and published in
#   M. Alizadeh, A. Greenberg, D. A. Maltz, J. Padhye, P. Patel, B. Prabhakar, S. Sengupta,
#   M. Sridharan, "Data Center TCP (DCTCP)", ACM SIGCOMM 2010 (Figure 4, flow-size distribution),
# as tabulated for the HPCC paper's simulations (Y. Li et al., "HPCC: High Precision Congestion
# Control", ACM SIGCOMM 2019; traffic_gen/WebSearch_distribution.txt of its simulator repository).
# Columns: flow size in bytes, cumulative percent of flows; linear interpolation between points.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
