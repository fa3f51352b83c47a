"""The state the blog's SSD was in for seed 000's items 3 and 5 (Kim In-sung, "SSD story 7:
SSDs and servers", blog, December 2008, http://minix.tistory.com/93).

Items 3 (aging, mkfs, MFT) and 5 (the mail queue) ran on an Intel MLC SSD (the X25-M here;
one drive, as we read the blog, which does not say). The blog says what had happened to it: once it had been formatted, mounted and filled with
files, its performance stayed abnormally poor, and formatting it again did not bring it back;
filling it again and again made it stop responding (its reliability section: repeated
`cp -a /usr` copies onto the drive). A 2008 kernel sent no TRIM, so every block the drive
had been given stayed valid to it after the files were deleted; the X25-M's firmware of
2008 (8610) also fragmented its own mapping under small writes, a slowdown PC Perspective
measured and Intel's firmware 8820 fixed in April 2009 (A. Malventano, "Intel Responds to
Fragmentation with New X25-M Firmware", PC Perspective, April 2009).

So the SSD of these items starts used: filled, then written over twice at random in 4 KiB
pieces (``random:2``: each logical block rewritten about twice, which brings the flash to the
steady state of random writes, where garbage collection copies what every block still holds).
Two passes are our choice of a drive in that state, not fitted: one pass and two give mail
queue times of 1,703 s and 1,763 s (quick mode, projected). The blog gives no figure of the
drive's state itself. The model's used X25-M writes 128 KiB sequential runs at about 9 MB/s
in the first 20 s (70 MB/s filled in order), below the 30-40 MB/s PC Perspective saw on
its fragmented drives; its 4 KiB random writes run at 3,100-3,300 IOPS, about Intel's 3,300.

Seed 000's arrays (items 4, 6 and 7: five and eight SSDs) used other drives whose history the
blog does not give; they stay filled in order.
"""

#: ``precondition`` of the blog's SSD in items 3 and 5: filled, then two passes of random
#: 4 KiB writes
SSD_STATE = "random:2"
