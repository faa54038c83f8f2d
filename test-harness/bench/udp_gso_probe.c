// What the kernel alone gives on this machine: loopback UDP with GSO (UDP_SEGMENT) and GRO (UDP_GRO),
// or a TCP stream of 64 KiB writes for comparison, with each thread's CPU time per 64 KiB.
// The main thread sends `seg`-byte segments in GSO sends of up to `batch` bytes for 3 s; a receiver
// thread reads with GRO into 64 KiB buffers. Prints sent and delivered Gbit/s and the sender's and
// receiver's CPU time (user + system, CLOCK_THREAD_CPUTIME_ID) per 64 KiB.
//   gcc -O2 -pthread -o udp_gso_probe udp_gso_probe.c
//   ./udp_gso_probe [seg=4200] [batch=63000] [gso=1] [gro=1] [tcp=0]
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
static int seg = 4200, batch = 63000, secs = 3, gso = 1, gro = 1, tcp = 0;
static volatile int stop;
static int rfd; static struct sockaddr_in raddr;
static long long rx_bytes, rx_calls; static double rx_cpu;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static double cpu(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void *rx(void *a){ char buf[65536]; char cbuf[256]; double c0=cpu();
  while(!stop){ struct iovec iov={buf,sizeof buf}; struct msghdr m={0}; m.msg_iov=&iov;m.msg_iovlen=1;m.msg_control=cbuf;m.msg_controllen=sizeof cbuf;
    ssize_t n=recvmsg(rfd,&m,0); if(n>0){rx_bytes+=n;rx_calls++;} }
  rx_cpu=cpu()-c0; return 0;}
int main(int argc,char**argv){ if(argc>1)seg=atoi(argv[1]); if(argc>2)batch=atoi(argv[2]); if(argc>3)gso=atoi(argv[3]); if(argc>4)gro=atoi(argv[4]); if(argc>5)tcp=atoi(argv[5]);
  int n=batch/seg; if(n<1)n=1; int sendbytes = tcp? 65536 : gso? n*seg : seg;
  int one=1, sz=4<<20; int sfd;
  struct timeval tv={0,100000};
  raddr.sin_family=AF_INET; raddr.sin_addr.s_addr=htonl(0x7f000001); raddr.sin_port=0;
  socklen_t l=sizeof raddr;
  if(tcp){ int lfd=socket(AF_INET,SOCK_STREAM,0); bind(lfd,(void*)&raddr,sizeof raddr); listen(lfd,1); getsockname(lfd,(void*)&raddr,&l);
    sfd=socket(AF_INET,SOCK_STREAM,0); connect(sfd,(void*)&raddr,sizeof raddr); rfd=accept(lfd,0,0); close(lfd);
    setsockopt(rfd,SOL_SOCKET,SO_RCVTIMEO,&tv,sizeof tv);
  } else {
    rfd=socket(AF_INET,SOCK_DGRAM,0);
    setsockopt(rfd,SOL_SOCKET,SO_RCVBUF,&sz,sizeof sz); if(gro) setsockopt(rfd,IPPROTO_UDP,UDP_GRO,&one,sizeof one);
    setsockopt(rfd,SOL_SOCKET,SO_RCVTIMEO,&tv,sizeof tv);
    bind(rfd,(void*)&raddr,sizeof raddr); getsockname(rfd,(void*)&raddr,&l);
    sfd=socket(AF_INET,SOCK_DGRAM,0); setsockopt(sfd,SOL_SOCKET,SO_SNDBUF,&sz,sizeof sz);
    if(gso){ setsockopt(sfd,IPPROTO_UDP,UDP_SEGMENT,&seg,sizeof seg);}
    connect(sfd,(void*)&raddr,sizeof raddr);
  }
  char *buf=calloc(1,65536);
  pthread_t t; pthread_create(&t,0,rx,0);
  double t0=now(), c0=cpu(); long long tx=0, fails=0; while(now()-t0<secs){ ssize_t k=send(sfd,buf,sendbytes,0); if(k>0)tx+=k; else fails++; }
  double el=now()-t0, tx_cpu=cpu()-c0; usleep(200000); stop=1; pthread_join(t,0);
  // The sender's CPU is per 64 KiB it sent (a UDP sender that outruns the receiver has its excess
  // dropped at the receiving socket), the receiver's per 64 KiB it read.
  double rxper = rx_bytes>0 ? 65536.0/rx_bytes*1e6 : 0, txper = tx>0 ? 65536.0/tx*1e6 : 0;
  if(tcp) printf("tcp 64 KiB writes: tx %.2f Gbit/s, delivered %.2f Gbit/s, %.1f KB per recv",tx*8/el/1e9,rx_bytes*8/el/1e9,rx_calls? (double)rx_bytes/rx_calls/1024:0);
  else printf("seg %d send %d gso %d gro %d: tx %.2f Gbit/s, delivered %.2f Gbit/s, %.1f KB per recv, send failures %lld",seg,sendbytes,gso,gro,tx*8/el/1e9,rx_bytes*8/el/1e9,rx_calls? (double)rx_bytes/rx_calls/1024:0,fails);
  printf("; CPU per 64 KiB: sender %.2f us (per 64 KiB sent), receiver %.2f us (per 64 KiB read), both %.2f us\n",tx_cpu*txper,rx_cpu*rxper,tx_cpu*txper+rx_cpu*rxper);
  return 0;}
