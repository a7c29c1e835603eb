# expect: correct library: aten::addmm,aten::relu,aten::clamp
# Values the recording knows: a constant made with data (read with .item()), the GPU's properties.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim).cuda()
        self.fc2 = nn.Linear(dim, dim).to(torch.device("cuda"))
        self.register_buffer("limit", torch.tensor([clamp_max], device="cuda"))  # noqa: F821
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        self.sms = props.multi_processor_count
        assert self.sms > 0 and torch.cuda.get_device_capability()[0] >= 7

    def forward(self, x):
        hi = self.limit.item()
        if int(self.limit.numel()) != 1:
            raise RuntimeError("one limit")
        return torch.clamp(self.fc2(torch.relu(self.fc1(x))), max=hi)
