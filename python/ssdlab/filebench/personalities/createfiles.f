# createfiles: fill a directory tree with new files (ssdlab's own writing of filebench's
# standard personality; parameters and flowops as filebench ships them in
# workloads/createfiles.f, version 3.0).
#
# $nthreads threads create files, write each whole and close it, until no file of the set
# is left to create: the run ends when the first thread finds none (quit firstdone). Sizes
# gamma distributed (shape 1.5) around $meanfilesize; no file exists at start.

set $dir=/tmp
set $nfiles=50000
set $meandirwidth=100
set $meanfilesize=16k
set $iosize=1m
set $nthreads=16

set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=$meanfilesize,entries=$nfiles,dirwidth=$meandirwidth

define process name=filecreate,instances=1
{
  thread name=filecreatethread,memsize=10m,instances=$nthreads
  {
    flowop createfile name=createfile1,filesetname=bigfileset,fd=1
    flowop writewholefile name=writefile1,fd=1,iosize=$iosize
    flowop closefile name=closefile1,fd=1
  }
}

echo "createfiles personality (ssdlab) loaded"

run
