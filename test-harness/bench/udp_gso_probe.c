// What the kernel alone gives on this machine: loopback UDP with GSO (UDP_SEGMENT) and GRO (UDP_GRO).
// The main thread sends `seg`-byte segments in GSO sends of up to `batch` bytes for 3 s; a receiver
// thread reads with GRO into 64 KiB buffers. Prints sent and delivered Gbit/s.
//   gcc -O2 -pthread -o udp_gso_probe udp_gso_probe.c
//   ./udp_gso_probe [seg=4200] [batch=63000] [gso=1] [gro=1]
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
static int seg = 4200, batch = 63000, secs = 3, gso = 1, gro = 1;
static volatile int stop;
static int rfd; static struct sockaddr_in raddr;
static long long rx_bytes, rx_calls;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void *rx(void *a){ char buf[65536]; char cbuf[256];
  while(!stop){ struct iovec iov={buf,sizeof buf}; struct msghdr m={0}; m.msg_iov=&iov;m.msg_iovlen=1;m.msg_control=cbuf;m.msg_controllen=sizeof cbuf;
    ssize_t n=recvmsg(rfd,&m,0); if(n>0){rx_bytes+=n;rx_calls++;} }
  return 0;}
int main(int argc,char**argv){ if(argc>1)seg=atoi(argv[1]); if(argc>2)batch=atoi(argv[2]); if(argc>3)gso=atoi(argv[3]); if(argc>4)gro=atoi(argv[4]);
  int n=batch/seg; if(n<1)n=1; int sendbytes = gso? n*seg : seg;
  rfd=socket(AF_INET,SOCK_DGRAM,0); int one=1, sz=4<<20;
  setsockopt(rfd,SOL_SOCKET,SO_RCVBUF,&sz,sizeof sz); if(gro) setsockopt(rfd,IPPROTO_UDP,UDP_GRO,&one,sizeof one);
  struct timeval tv={0,100000}; setsockopt(rfd,SOL_SOCKET,SO_RCVTIMEO,&tv,sizeof tv);
  raddr.sin_family=AF_INET; raddr.sin_addr.s_addr=htonl(0x7f000001); raddr.sin_port=0; bind(rfd,(void*)&raddr,sizeof raddr);
  socklen_t l=sizeof raddr; getsockname(rfd,(void*)&raddr,&l);
  int sfd=socket(AF_INET,SOCK_DGRAM,0); setsockopt(sfd,SOL_SOCKET,SO_SNDBUF,&sz,sizeof sz);
  if(gso){ setsockopt(sfd,IPPROTO_UDP,UDP_SEGMENT,&seg,sizeof seg);} 
  connect(sfd,(void*)&raddr,sizeof raddr);
  char *buf=calloc(1,65536);
  pthread_t t; pthread_create(&t,0,rx,0);
  double t0=now(); long long tx=0, fails=0; while(now()-t0<secs){ ssize_t k=send(sfd,buf,sendbytes,0); if(k>0)tx+=k; else fails++; }
  double el=now()-t0; usleep(200000); stop=1; pthread_join(t,0);
  printf("seg %d send %d gso %d gro %d: tx %.2f Gbit/s, delivered %.2f Gbit/s, %.1f KB per recv, send failures %lld\n",seg,sendbytes,gso,gro,tx*8/el/1e9,rx_bytes*8/el/1e9,rx_calls? (double)rx_bytes/rx_calls/1024:0,fails);
  return 0;}
