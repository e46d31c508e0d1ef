-- An open-weights model behind an OpenAI-compatible server on this machine (Llama 3.3 70B Instruct): vLLM
-- (`vllm serve meta-llama/Llama-3.3-70B-Instruct --port 8000`), SGLang, llama.cpp's server or Ollama
-- (base_url http://127.0.0.1:11434/v1 and Ollama's model name). No key by default
-- (api_key_env = "none"); give --api-key-env VAR for a server started with one. No price: the
-- cost is the GPU time the server takes.
return {
  provider = "openai",
  model = "meta-llama/Llama-3.3-70B-Instruct",
  base_url = "http://127.0.0.1:8000/v1",
  api_key_env = "none",
  temperature = 0.7,
  max_tokens = 8192,
  format = "lua",
  notes = "open-weights: Llama 3.3 70B Instruct",
}
