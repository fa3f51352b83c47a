"""Scenario texts several test modules run: a small download server (two classes of clients
behind two bonded 1 GbE ports, 5 s). Its lines are pinned by tests that check the line
numbers in error messages."""

SERVER = """\
name = "downloads"
filesystem = { type = "ext3", size = "4g" }
runtime = "5s"

[[fileset]]
name = "catalogue"
entries = 20
size = "32m"
prealloc = 1.0

[network]
nic = { links = 2, rate = "1g", mode = "802.3ad", xmit_hash_policy = "layer3+4" }

[[network.clients]]
name = "adsl"
count = 6
line = "600k"
rtt = "30ms"

[[network.clients]]
name = "fibre"
count = 3
line = "60m"
rtt = "10ms"
window = "64k"

[[thread]]
name = "adsl"
instances = 6
client = "adsl"
ops = [ { op = "open", set = "catalogue", pick = { zipf = 0.8 } }, { op = "send_whole", io = "64k" }, { op = "close" } ]

[[thread]]
name = "fibre"
instances = 3
client = "fibre"
ops = [ { op = "open", set = "catalogue", pick = { zipf = 0.8 } }, { op = "send_whole", io = "64k" }, { op = "close" } ]
"""
