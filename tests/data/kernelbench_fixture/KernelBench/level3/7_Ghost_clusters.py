import math
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch as th

class Model(nn.Module):
    """NetVLAD-style soft assignment with ghost clusters and an optional mask argument left at None
    (KernelBench's NetVladWithGhostClusters)."""
    def __init__(self, cluster_size, feature_size, ghost_clusters):
        super(Model, self).__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        self.ghost_clusters = ghost_clusters
        init_sc = (1 / math.sqrt(feature_size))
        clusters = cluster_size + ghost_clusters
        self.clusters = nn.Parameter(init_sc * th.randn(feature_size, clusters))
        self.batch_norm = nn.BatchNorm1d(clusters)
        self.clusters2 = nn.Parameter(init_sc * th.randn(1, feature_size, cluster_size))
        self.out_dim = self.cluster_size * feature_size

    def forward(self, x, mask=None):
        max_sample = x.size()[1]
        x = x.view(-1, self.feature_size)
        if x.device != self.clusters.device:
            raise ValueError("x and clusters are on different devices")
        assignment = th.matmul(x, self.clusters)
        assignment = self.batch_norm(assignment)
        assignment = F.softmax(assignment, dim=1)
        assignment = assignment[:, :self.cluster_size]
        assignment = assignment.view(-1, max_sample, self.cluster_size)
        a_sum = th.sum(assignment, dim=1, keepdim=True)
        a = a_sum * self.clusters2
        assignment = assignment.transpose(1, 2)
        x = x.view(-1, max_sample, self.feature_size)
        vlad = th.matmul(assignment, x)
        vlad = vlad.transpose(1, 2)
        vlad = vlad - a
        vlad = F.normalize(vlad)
        vlad = vlad.reshape(-1, self.cluster_size * self.feature_size)
        vlad = F.normalize(vlad)
        return vlad

batch_size = 256
num_features = 50
num_clusters = 16
feature_size = 128
ghost_clusters = 4

def get_inputs():
    return [torch.rand(batch_size, num_features, feature_size)]

def get_init_inputs():
    return [num_clusters, feature_size, ghost_clusters]
