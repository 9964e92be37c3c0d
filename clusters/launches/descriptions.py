"""What the launch form says of each blueprint parameter, in English as the blueprints write it (their
``Description``), listed here so the translation catalogue keeps them: the form translates a description when it
shows it (``clusters.forms.field_for``). A test fails when a blueprint adds or changes a description this list
lacks."""
from django.utils.translation import gettext_noop

DESCRIPTIONS = (
    gettext_noop("Name of the HyperPod cluster (the EKS cluster is named <ClusterName>-eks)."),
    gettext_noop("Kubernetes version of the EKS control plane (one HyperPod supports)."),
    gettext_noop("VPC of the network stack."),
    gettext_noop("Private subnet of the network stack (in the availability zone of the capacity); HyperPod puts "
                 "its nodes' interfaces here."),
    gettext_noop("EFA security group of the network stack (control plane and nodes)."),
    gettext_noop("CIDR of the first control-plane subnet (EKS needs two zones for its interfaces), inside the VPC "
                 "and outside its other subnets."),
    gettext_noop("CIDR of the second control-plane subnet, in another availability zone."),
    gettext_noop("Accelerated instance type of the worker group."),
    gettext_noop("Number of worker instances."),
    gettext_noop("Threads per core on the workers (1 disables hyper-threading)."),
    gettext_noop("Extra EBS volume on every instance (containerd and kubelet keep images there), in GB."),
    gettext_noop("Run HyperPod's deep health checks (InstanceStress and InstanceConnectivity) on the workers (GPU "
                 "and Trainium alike) before they join the cluster, and on replacement nodes. Adds time to "
                 "creation."),
    gettext_noop("SageMaker training plan that reserves the workers' capacity; empty for on-demand capacity."),
    gettext_noop("Bucket of the storage stack; lifecycle scripts go under geniac/<cluster>/lifecycle/, manifests "
                 "under geniac/<cluster>/kubernetes/."),
    gettext_noop("FSx for Lustre file system of the storage stack (the CSI volume handle)."),
    gettext_noop("DNS name of the storage stack's FSx for Lustre file system."),
    gettext_noop("Mount name of the storage stack's FSx for Lustre file system."),
    gettext_noop("Entry point of the lifecycle scripts, relative to the cluster's lifecycle prefix in the bucket."),
    gettext_noop("Name of the HyperPod cluster, unique in the account and region."),
    gettext_noop("Private subnet of the network stack (in the availability zone of the capacity)."),
    gettext_noop("EFA security group of the network stack."),
    gettext_noop("Instance type of the Slurm controller group."),
    gettext_noop("Extra EBS volume on every instance (HyperPod mounts it at /opt/sagemaker), in GB."),
    gettext_noop("Run HyperPod's deep health checks (InstanceStress and InstanceConnectivity: GPU stress, NCCL "
                 "and EFA) on GPU workers before they join the cluster, and on replacement nodes. Adds time to "
                 "creation."),
    gettext_noop("Bucket of the storage stack; the lifecycle scripts are uploaded under "
                 "geniac/<cluster>/lifecycle/."),
    gettext_noop("DNS name of the storage stack's FSx for Lustre file system (written to "
                 "provisioning_parameters.json)."),
    gettext_noop("Availability zone of the capacity reservation or capacity block; both subnets are created there."),
    gettext_noop("IPv4 range of the VPC."),
    gettext_noop("IPv4 range of the public subnet (head node, NAT gateway); must lie inside VpcCidr."),
    gettext_noop("IPv4 range of the private subnet (compute nodes, file systems); must lie inside VpcCidr."),
    gettext_noop("Days the VPC flow log (every accepted and rejected connection) is kept in CloudWatch Logs."),
    gettext_noop("Alias of the Prometheus workspace and name of the Grafana workspace."),
    gettext_noop("How people sign in to Grafana."),
    gettext_noop("The https endpoint subscribed to the alert topic. Left empty, the portal fills in its own SNS "
                 "endpoint (PORTAL_BASE_URL + /api/health/alerts/sns/); with PORTAL_BASE_URL unset or not https "
                 "nothing is subscribed (the topic still receives the alerts)."),
    gettext_noop("Name of the ParallelCluster cluster; must differ from the stack name."),
    gettext_noop("Version of the ParallelCluster custom resource provider."),
    gettext_noop("Operating system of all nodes."),
    gettext_noop("Empty for ParallelCluster's official image of the OS; otherwise an AMI built with pcluster "
                 "build-image (for example on a Deep Learning Base AMI) for that OS."),
    gettext_noop("Instance type of the head node."),
    gettext_noop("EC2 key pair for SSH to the head node; empty to rely on SSM Session Manager only."),
    gettext_noop("Name of the Slurm queue (partition)."),
    gettext_noop("Accelerated instance type of the queue."),
    gettext_noop("Static nodes kept running (a capacity block always runs ComputeMaxCount)."),
    gettext_noop("Most nodes the queue scales to."),
    gettext_noop("ONDEMAND (optionally targeting an On-Demand Capacity Reservation) or CAPACITY_BLOCK (EC2 "
                 "Capacity Block for ML)."),
    gettext_noop("Capacity reservation or capacity block id (cr-...); empty for plain on-demand."),
    gettext_noop("Turn hyper-threading off on the compute nodes (the reference leaves it on)."),
    gettext_noop("host:port of a MySQL-compatible database for Slurm accounting (slurmdbd); empty for none."),
    gettext_noop("Database user for Slurm accounting."),
    gettext_noop("Secrets Manager secret holding the accounting database password."),
    gettext_noop("Public subnet of the network stack (head node)."),
    gettext_noop("Private subnet of the network stack (compute nodes), in the reservation's availability zone."),
    gettext_noop("EFA security group of the network stack, added to every node."),
    gettext_noop("Cluster placement group of the network stack (used only without a targeted reservation)."),
    gettext_noop("Bucket of the storage stack; nodes read it, and the software stack is uploaded under "
                 "geniac/<cluster>/."),
    gettext_noop("FSx for Lustre file system of the storage stack, mounted at /fsx."),
    gettext_noop("Root volume of the storage stack's OpenZFS file system, mounted at /home; empty for none."),
    gettext_noop("Private subnet of the network stack; the file systems live there."),
    gettext_noop("Security group of the network stack (all traffic between members covers Lustre and NFS)."),
    gettext_noop("Lustre capacity in GiB (PERSISTENT_2 SSD is sold as 1.2 TiB, then in 2.4 TiB steps)."),
    gettext_noop("Throughput per TiB of storage in MB/s."),
    gettext_noop("Prefix in the bucket that is linked to /data on the Lustre file system."),
    gettext_noop("What deleting (or replacing) this stack does to the Lustre scratch file system: Delete it "
                 "(files already exported to the bucket stay in the bucket; files not yet exported are lost), or "
                 "Retain it (it keeps running and billing until deleted by hand). The bucket and the home file "
                 "system are always retained."),
    gettext_noop("Create an FSx for OpenZFS file system for shared /home."),
    gettext_noop("OpenZFS deployment: SINGLE_AZ_1, or SINGLE_AZ_HA_2 (a standby file server in the same zone: "
                 "/home survives a server failure; throughput from 160 MB/s)."),
    gettext_noop("OpenZFS capacity in GiB."),
    gettext_noop("OpenZFS throughput in MB/s (SINGLE_AZ_1 64-4096, SINGLE_AZ_HA_2 160-10240)."),
    gettext_noop("Whether the storage stack's Lustre file system is EFA-enabled (nodes then set up Lustre "
                 "networking on EFA before mounting it)."),
    gettext_noop("Serve clients over EFA (and GPUDirect Storage) as well as TCP: set only when the file system is "
                 "created (changing it replaces the file system), and it fixes the throughput per TiB. Worth it "
                 "above about 10 GB/s of throughput. Nodes with EFA devices, a recent EFA driver and a Lustre client "
                 "with EFA support reach it over EFA; the others (head nodes, controllers) over TCP."),
)
