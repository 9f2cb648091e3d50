# A GPU build-agent image with cuDNN baked in (docs/fleet.md, Images with
# Packer): Packer's Ansible provisioner runs playbooks/image.yml, which
# applies the cudnn_agent role, and the image keeps cudnn-deploy's receipt
# and an SBOM of what was installed.
#
#   packer init packer/cudnn-agent.pkr.hcl
#   packer build -var cudnn_deploy_binary=./cudnn-deploy packer/cudnn-agent.pkr.hcl
#
# The source is an example (AWS, an Ubuntu image with the NVIDIA driver and
# CUDA 11.8 already in it); any builder works: the provisioner part is the
# same.
packer {
  required_plugins {
    amazon = {
      source  = "github.com/hashicorp/amazon"
      version = ">= 1.2.0"
    }
    ansible = {
      source  = "github.com/hashicorp/ansible"
      version = ">= 1.1.0"
    }
  }
}

variable "base_ami" {
  type        = string
  description = "An image with the NVIDIA driver and a CUDA 11.8 toolkit"
}

variable "cudnn_deploy_binary" {
  type        = string
  description = "The cudnn-deploy executable to put on the image"
}

variable "cudnn_manifest" {
  type    = string
  default = "cudnn-8.9.7.29-cuda11-linux-x86_64"
}

source "amazon-ebs" "gpu_agent" {
  region        = "us-east-1"
  instance_type = "g5.xlarge"
  source_ami    = var.base_ami
  ssh_username  = "ubuntu"
  ami_name      = "gpu-agent-cudnn-{{timestamp}}"
}

build {
  sources = ["source.amazon-ebs.gpu_agent"]

  provisioner "file" {
    source      = var.cudnn_deploy_binary
    destination = "/tmp/cudnn-deploy"
  }

  provisioner "shell" {
    inline = ["sudo install -m 0755 /tmp/cudnn-deploy /usr/local/bin/cudnn-deploy"]
  }

  provisioner "ansible" {
    playbook_file = "${path.root}/../playbooks/image.yml"
    user          = "ubuntu"
    extra_arguments = [
      "--extra-vars", "cudnn_agent_manifest=${var.cudnn_manifest}",
      "--extra-vars", "cudnn_agent_cuda_root=/usr/local/cuda-11.8",
    ]
    ansible_env_vars = [
      "ANSIBLE_COLLECTIONS_PATH=${path.root}/../../../..",
    ]
  }
}
