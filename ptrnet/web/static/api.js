// JSON POST for the lesson panels and live training.

/** POST `body` as JSON to `url`; the parsed answer, or an Error with the server's `detail`. */
export async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body || {}),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.detail || response.statusText);
  return data;
}

