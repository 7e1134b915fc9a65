# Lev MCP: one image for every service of docker-compose.yml (web, mcp, worker, beat, migrate).
#   docker build -t lev-mcp .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=lev.settings

WORKDIR /app

# The service account: owns nothing in /app (the code and static files stay read-only to it).
RUN groupadd --system --gid 10001 lev \
    && useradd --system --uid 10001 --gid lev --home-dir /nonexistent --no-create-home \
       --shell /usr/sbin/nologin lev

# Dependencies first, read from pyproject.toml, so a code change does not reinstall them.
# (psycopg[binary] ships its own libpq: no compiler or system libraries are needed.)
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install --requirement /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The project itself, installed from pyproject.toml (editable: one copy of the code, in /app).
# Then the static files (admin, API docs) into STATIC_ROOT=/app/staticfiles, under the production
# profile the containers run with, so its static-files storage is the one that writes them. The
# values below exist only for this command (they are not in the image's environment); collectstatic
# touches neither the database nor Redis, and no real secret is baked into the image.
COPY . .
RUN pip install --no-deps --editable . \
    && LEV_ENV=production DEBUG=false ALLOWED_HOSTS=build.invalid \
       SECRET_KEY=collectstatic-only-not-a-secret-0123456789abcdefghijklmnopqrstuvwxyz \
       python manage.py collectstatic --noinput \
    && python -m compileall -q lev deals lenders mcp_tools deploy

USER lev:lev
EXPOSE 8000

# The web service; docker-compose.yml gives the other services their own command. The config file
# names the application with its worker class (gunicorn's ASGI worker and lev.asgi; see the file).
CMD ["gunicorn", "--config", "deploy/gunicorn.conf.py"]
