#!/usr/bin/env bash
set -e
echo demo placeholder
