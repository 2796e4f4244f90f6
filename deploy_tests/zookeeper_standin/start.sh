#!/bin/sh
# As the official image: zoo.cfg from the environment, then ZooKeeper in the foreground.
set -e
mkdir -p /data /conf
echo "${ZOO_MY_ID:-1}" > /data/myid
cat > /conf/zoo.cfg <<CONF
dataDir=/data
clientPort=2181
tickTime=2000
initLimit=5
syncLimit=2
admin.enableServer=false
4lw.commands.whitelist=*
CONF
for server in ${ZOO_SERVERS:-}; do echo "$server" >> /conf/zoo.cfg; done
exec java -Xmx256m -cp "/opt/zookeeper/lib/*" org.apache.zookeeper.server.quorum.QuorumPeerMain /conf/zoo.cfg
