-- An open-weights model behind an OpenAI-compatible server on this machine (DeepSeek-Coder-V2-Lite Instruct (16B, MoE)): vLLM
-- (`vllm serve deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct --port 8000`), SGLang, llama.cpp's server or Ollama
-- (base_url http://127.0.0.1:11434/v1 and Ollama's model name). No key by default
-- (api_key_env = "none"); give --api-key-env VAR for a server started with one. No price: the
-- cost is the GPU time the server takes.
return {
  provider = "openai",
  model = "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct",
  base_url = "http://127.0.0.1:8000/v1",
  api_key_env = "none",
  temperature = 0.7,
  max_tokens = 8192,
  format = "lua",
  notes = "open-weights: DeepSeek-Coder-V2-Lite Instruct (16B, MoE)",
}
