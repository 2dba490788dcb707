/* Flush latency of this disk, as the store's redo log meets it: N (400) writes of 512 bytes,
 * each followed by a flush, p50 and p90 in microseconds. Modes: 0 append + fdatasync,
 * 1 overwrite inside a zero-filled file + fdatasync, 2 the same with fsync, 3 overwrite
 * with O_DSYNC, 4 overwrite inside a fallocate'd file + fdatasync (the redo log's way).
 * Usage: gcc -O2 -o /tmp/fsync-latency bench/fsync-latency.c && /tmp/fsync-latency FILE MODE
 * (FILE is created, written and removed). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  const char*path=argv[1]; int mode=atoi(argv[2]); int n=400; char buf[4096]; memset(buf,'x',sizeof buf);
  int fd=open(path,O_RDWR|O_CREAT|O_TRUNC|(mode==3?O_DSYNC:0),0644);
  if(mode>=1 && mode<=3){ // preallocate 8 MB and sync it
    double t0=now(); for(int i=0;i<2048;i++) write(fd,buf,4096); fsync(fd); lseek(fd,0,SEEK_SET); if(mode==1) printf("zero-fill 8MB+fsync: %.0f us\n", now()-t0);}
  if(mode==4){ double t0=now(); posix_fallocate(fd,0,8<<20); fsync(fd); printf("fallocate 8MB+fsync: %.0f us\n", now()-t0);}
  double d[400];
  for(int i=0;i<n;i++){double t=now();
    if(mode==0){write(fd,buf,512); fdatasync(fd);}          // append + fdatasync
    else if(mode==1){pwrite(fd,buf,512,(off_t)i*512); fdatasync(fd);} // overwrite + fdatasync
    else if(mode==2){pwrite(fd,buf,512,(off_t)i*512); fsync(fd);}
    else if(mode==3){pwrite(fd,buf,512,(off_t)i*512);}                  // O_DSYNC overwrite
    else {pwrite(fd,buf,512,(off_t)i*512); fdatasync(fd);}
    d[i]=now()-t;}
  qsort(d,n,sizeof(double),cmp);
  printf("mode %d: p50 %.0f us p90 %.0f us\n",mode,d[n/2],d[n*9/10]);
  close(fd); unlink(path); return 0;}
