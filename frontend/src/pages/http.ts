/** Calls to the HTTP API from these pages: session cookie plus the CSRF token, JSON answers. */

export interface ApiAnswer<T> {
  status: number;
  body: T | null;
}

export async function getJson<T>(url: string): Promise<ApiAnswer<T>> {
  const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  return { status: response.status, body: await readJson<T>(response) };
}

export async function postJson<T>(url: string, csrf: string, payload: unknown): Promise<ApiAnswer<T>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrf },
    credentials: "same-origin",
    body: JSON.stringify(payload),
  });
  return { status: response.status, body: await readJson<T>(response) };
}

async function readJson<T>(response: Response): Promise<T | null> {
  try {
    return (await response.json()) as T;
  } catch {
    return null;
  }
}

/** A multipart upload with upload progress (fetch has none): resolves with the JSON answer. */
export function upload<T>(
  url: string,
  csrf: string,
  form: FormData,
  onProgress: (fraction: number) => void,
): Promise<ApiAnswer<T>> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("X-CSRFToken", csrf);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener("load", () => {
      let body: T | null = null;
      try {
        body = JSON.parse(xhr.responseText) as T;
      } catch {
        body = null;
      }
      resolve({ status: xhr.status, body });
    });
    xhr.addEventListener("error", () => reject(new Error("The upload failed: the server could not be reached.")));
    xhr.send(form);
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => window.setTimeout(resolve, ms));
}

export function formatBytes(n: number): string {
  const units = ["bytes", "KB", "MB", "GB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${n} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
