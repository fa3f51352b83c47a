# copyfiles: copy a directory tree file by file (ssdlab's own writing of filebench's standard
# personality; parameters and flowops as filebench ships them in workloads/copyfiles.f,
# version 3.0).
#
# $nthreads threads open a file of the source tree, read it whole, create a file in the
# destination tree and write it whole, until every destination file exists: the run ends
# when the first thread finds none left (quit firstdone). The source tree exists at start.

set $dir=/tmp
set $nfiles=1000
set $meandirwidth=20
set $meanfilesize=16k
set $iosize=1m
set $nthreads=1

set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=$meanfilesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=100,paralloc
define fileset name=destfiles,path=$dir,size=$meanfilesize,entries=$nfiles,dirwidth=$meandirwidth

define process name=filereader,instances=1
{
  thread name=filereaderthread,memsize=10m,instances=$nthreads
  {
    flowop openfile name=openfile1,filesetname=bigfileset,fd=1
    flowop readwholefile name=readfile1,fd=1,iosize=$iosize
    flowop createfile name=createfile2,filesetname=destfiles,fd=2
    flowop writewholefile name=writefile2,fd=2,srcfd=1,iosize=$iosize
    flowop closefile name=closefile1,fd=1
    flowop closefile name=closefile2,fd=2
  }
}

echo "copyfiles personality (ssdlab) loaded"

run
